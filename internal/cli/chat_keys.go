package cli

import (
	"bytes"
	"context"
	"sync"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/ui"
)

// keyWatch reads the keyboard while a turn runs (the terminal is then
// quiet: no echo, no line buffering). A lone Esc stops the running step
// (chat.escape), or the turn when no step runs; every other key is kept, shown on a row below the output
// (Renderer.SetQueued), and handed back to the next prompt, where it
// appears as typed (a line ended with Enter is sent at once). It reads only from a
// terminal: piped input holds the answers to later prompts.
type keyWatch struct {
	mu     sync.Mutex
	ahead  []byte // typed during the turn, for the next prompt
	cancel context.CancelFunc
	done   chan struct{}
	turn   context.Context // the running turn's, to restart after a prompt
}

// start begins watching for the turn whose context is ctx.
func (k *keyWatch) start(c *chat, ctx context.Context) {
	if !c.in.IsTerminal() {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.turn = ctx
	k.run(c)
}

// run starts the reading goroutine; call with mu held.
func (k *keyWatch) run(c *chat) {
	if k.cancel != nil || k.turn == nil || k.turn.Err() != nil {
		return
	}
	wctx, cancel := context.WithCancel(k.turn)
	done := make(chan struct{})
	k.cancel, k.done = cancel, done
	go func() {
		defer close(done)
		for {
			b, err := c.in.Next(wctx)
			if err != nil {
				return
			}
			if b == 0x1b {
				if c.in.Wait(wctx, ui.EscWait) {
					k.add(c, b) // the start of a key sequence: the editor reads it
					continue
				}
				if wctx.Err() != nil {
					k.add(c, b)
					return
				}
				c.escape()
				continue
			}
			k.add(c, b)
		}
	}()
}

// pause stops reading (a permission prompt reads the keys now) and waits
// for the reader to be gone.
func (k *keyWatch) pause() {
	k.mu.Lock()
	cancel, done := k.cancel, k.done
	k.cancel, k.done = nil, nil
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// resume reads again after a prompt, while the turn lasts.
func (k *keyWatch) resume(c *chat) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.run(c)
}

// stop ends the watch at the end of a turn and gives what was typed back
// to the input, for the prompt: a line ended with Enter is then sent. After
// an interrupt nothing is sent by itself: the lines wait at the prompt, one
// message to edit, as the user stopped the work to think again.
func (k *keyWatch) stop(c *chat, interrupted bool) {
	k.pause()
	k.mu.Lock()
	ahead := k.ahead
	k.ahead, k.turn = nil, nil
	k.mu.Unlock()
	if interrupted {
		ahead = bytes.ReplaceAll(bytes.TrimRight(ahead, "\r"), []byte{'\r'}, []byte{'\n'})
	}
	c.in.Unread(ahead)
	c.r.SetQueued("")
}

func (k *keyWatch) add(c *chat, b byte) {
	k.mu.Lock()
	if b == 0x7f || b == 0x08 {
		// Backspace takes back the last character typed.
		if n := len(k.ahead); n > 0 && k.ahead[n-1] != 0x1b {
			_, size := utf8.DecodeLastRune(k.ahead)
			k.ahead = k.ahead[:n-size]
		}
	} else {
		k.ahead = append(k.ahead, b)
	}
	typed := string(k.ahead)
	k.mu.Unlock()
	c.r.SetQueued(typed)
}

// watchedPrompter hands the keyboard to the permission prompt: the key
// watch pauses while it is open.
type watchedPrompter struct{ c *chat }

func (w watchedPrompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	return w.prompt(ctx, req, d, pattern)
}
