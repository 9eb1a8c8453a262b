package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/ui"
)

// What happens beside the prompt: an MCP server that ends its start, a
// network question its start raises. While the line editor reads, such
// news waits in c.asides and the editor steps aside for it (Input.Poke,
// EditorOptions.OnPoke): the input leaves the screen, the news is shown
// or the question asked, and the input comes back as it was. Otherwise
// it is shown at once.

// aside is one thing to show or ask beside the prompt.
type aside struct {
	ctx  context.Context
	f    func()
	done chan struct{}
}

// setReading marks the main editor's ReadLine: news beside it waits for
// OnPoke. The editor starts reading only once a question asked beside it
// is answered: one reader of the keys at a time.
func (c *chat) setReading(on bool) {
	if on {
		c.besideMu.Lock()
		defer c.besideMu.Unlock()
	}
	c.mu.Lock()
	c.reading = on
	c.mu.Unlock()
	if !on {
		c.runAsides()
	}
}

// beside runs f beside the prompt: at once unless the line editor reads,
// else when it steps aside. It returns once f ran, or ctx ended first
// (f then never runs).
func (c *chat) beside(ctx context.Context, f func()) error {
	c.besideMu.Lock()
	c.mu.Lock()
	if !c.reading {
		c.mu.Unlock()
		defer c.besideMu.Unlock()
		f()
		return nil
	}
	c.besideMu.Unlock()
	a := aside{ctx: ctx, f: f, done: make(chan struct{})}
	c.asides = append(c.asides, a)
	c.mu.Unlock()
	c.in.Poke()
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runAsides runs what waits (the editor's OnPoke, and after ReadLine).
func (c *chat) runAsides() {
	for {
		c.mu.Lock()
		if len(c.asides) == 0 {
			c.mu.Unlock()
			return
		}
		a := c.asides[0]
		c.asides = c.asides[1:]
		c.mu.Unlock()
		if a.ctx.Err() == nil {
			a.f()
		}
		close(a.done)
	}
}

// watchMCP shows the MCP servers starting beside the session: one line
// now, and one as each start ends, a failure saying where to look.
func (c *chat) watchMCP() {
	st := c.t.Style
	if names := c.s.MCPStarting(); len(names) > 0 {
		c.r.Print(st.Dim("mcp: starting " + strings.Join(names, ", ") + "… (the prompt is yours meanwhile; /mcp shows them)"))
	}
	s := c.s
	s.WatchMCP(func(e app.MCPStarted) {
		line := st.Dim(fmt.Sprintf("mcp: %s ready (%s)", e.Name, plural(e.Tools, "tool")))
		if e.Err != nil {
			line = st.Yellow(fmt.Sprintf("mcp: %s failed: %s; see /mcp", e.Name, ui.Sanitize(e.Err.Error())))
		}
		if left := s.MCPStarting(); len(left) > 0 {
			line += st.Dim(" · still starting: " + strings.Join(left, ", "))
		}
		c.beside(context.Background(), func() { c.r.Print(line) })
	})
}

// elicit shows an MCP server's question as a form, as prompt shows a
// permission question: beside the line editor, one at a time, the key
// watch paused.
func (w watchedPrompter) elicit(ctx context.Context, q *mcp.Elicitation) (mcp.ElicitAnswer, error) {
	ans := mcp.ElicitAnswer{Action: mcp.ElicitCancel}
	var err error
	ask := func() {
		w.c.keys.pause()
		defer w.c.keys.resume(w.c)
		ans, err = w.c.pr.Elicit(ctx, q)
	}
	if berr := w.c.beside(ctx, ask); berr != nil {
		return ans, berr
	}
	return ans, err
}

// prompt asks through the permission prompt, beside the line editor
// when a question comes while it reads (a server's start asks about the
// network). One question at a time (beside holds its lock): the key
// watch of a turn pauses while it is open and resumes after.
func (w watchedPrompter) prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	var ans permission.Answer
	var err error
	ask := func() {
		w.c.keys.pause()
		defer w.c.keys.resume(w.c)
		ans, err = w.c.pr.Prompt(ctx, req, d, pattern)
	}
	if berr := w.c.beside(ctx, ask); berr != nil {
		return permission.Answer{}, berr
	}
	return ans, err
}
