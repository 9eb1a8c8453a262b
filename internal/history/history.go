package history

import (
	"encoding/json"
	"fmt"

	"github.com/harness-dev/harness/internal/llm"
)

// Layer names recorded in llm.Block.Layer.
const (
	LayerCap     = "cap"     // head and tail kept, the rest in a spill file
	LayerStrip   = "strip"   // cut to a stub
	LayerDrop    = "drop"    // emptied to fit the window
	LayerSummary = "summary" // the handoff summary written by package compact
	LayerRewind  = "rewind"  // the user took turns back: messages from Keep on are gone
	LayerRepair  = "repair"  // a damaged log's history made valid: messages from Keep on replaced by Messages
	// LayerReminder marks a persisted reminder block (package reminder's
	// Delta form): harness's words in a user message, never the user's.
	LayerReminder = "reminder"

	// Per-block layers of a strip edit (BlockEdit.Layer).
	LayerFeedback = llm.LayerFeedback // the harness's own feedback on a malformed reply, as written
	LayerFold     = "fold"            // a repeat of earlier feedback, folded to a reference
	LayerTrim     = "trim"            // old assistant text cut to a head (Config.TrimText)
)

// Config sets the layers' thresholds. Zero fields take the defaults.
type Config struct {
	Cap       int     // chars of a tool result kept inline (CAP)
	Stub      int     // chars of a stripped tool result kept (STUB)
	CompactAt float64 // fraction of Window at which drop and compaction act (COMPACT_AT)
	CompactTo float64 // fraction of Window a compaction keeps as recent messages (COMPACT_TO)
	Window    int     // the model's context window in tokens (CONTEXT_WINDOW)

	// Reserve is the part of Window kept free for the reply: the request's
	// max_tokens (MAX_TOKENS, which holds the thinking budget too).
	// Anthropic with thinking on and DeepSeek count max_tokens against the
	// window with the prompt and refuse a request whose sum is over it
	// ("input length and `max_tokens` exceed context limit: X + Y > Z"),
	// so every layer keeps the prompt under Window − Reserve, the working
	// window. A reserve is never more than half of Window: with a reply
	// limit larger than that, the agent lowers each request's
	// max_tokens to the room the prompt leaves (ReplyRoom). New takes the
	// reserve off: Config returns the working window as Window and a zero
	// Reserve, so a history built from it (a sub-agent's) works the same.
	Reserve int

	// SpillDir is the host directory for spill files. It must be readable
	// both by bash inside the sandbox and by read_file: the project's
	// writable area or the session directory, not /tmp (private in the
	// sandbox). Empty means no spill files: the marker says so.
	SpillDir string

	// Strategy is how and when the layers run; nil is Harness.
	Strategy Strategy

	// StripBatch is the in-turn strip threshold of the harness strategy: old
	// tool output is stripped once a strip would save this many tokens,
	// all of it in one batch. Zero means DefaultStripBatch: strip each
	// result as soon as it leaves the latest two messages, which the
	// context benchmark shows is cheapest (a later batch rewrites the
	// cached assistant messages in between).
	StripBatch int

	// Disk says what files hold now, for the input strip: a body a tool
	// call wrote is stubbed only while its file holds exactly it. Nil:
	// no input is stubbed.
	Disk Disk

	// TrimText cuts old assistant text over 900 chars to about 500 (off
	// by default: no published evaluation supports dropping in-loop
	// reasoning; see TRIM_OLD_TEXT).
	TrimText bool

	// RewriteCost is what writing a cached token again costs over reading
	// it from the cache, in cache reads: (cache write − cache read) / cache
	// read of the model's prices (RewriteCostOf). The append strategy
	// weighs its in-turn edits with it. Zero means DefaultRewriteCost.
	RewriteCost float64
}

// Defaults, the reference harness's but for the cap: 5,000 with the
// spill file costs 0.02 of raw less than 10,000 while the model still sees
// at least as much output as the reference's (harness bench context).
const (
	DefaultCap        = 5000
	DefaultStub       = 300
	DefaultCompactAt  = 0.85
	DefaultCompactTo  = 0.35
	DefaultWindow     = 128000
	DefaultStripBatch = 1

	// DefaultRewriteCost is Anthropic's: a cache write is 1.25× the
	// input price, a read 0.1×, so rewriting costs 11.5 reads.
	DefaultRewriteCost = 11.5

	// SeedCap is the reference harness's cap, which the benchmark's seed
	// and raw strategies keep.
	SeedCap = 10000
)

// DefaultConfig returns the defaults with no spill directory.
func DefaultConfig() Config {
	return Config{
		Cap: DefaultCap, Stub: DefaultStub,
		CompactAt: DefaultCompactAt, CompactTo: DefaultCompactTo,
		Window: DefaultWindow, Strategy: Harness, StripBatch: DefaultStripBatch,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Cap <= 0 {
		c.Cap = d.Cap
	}
	if c.Stub <= 0 {
		c.Stub = d.Stub
	}
	if c.CompactAt <= 0 || c.CompactAt > 1 {
		c.CompactAt = d.CompactAt
	}
	if c.CompactTo <= 0 || c.CompactTo >= c.CompactAt {
		c.CompactTo = min(d.CompactTo, c.CompactAt/2)
	}
	if c.Window <= 0 {
		c.Window = d.Window
	}
	if c.Strategy == nil {
		c.Strategy = Harness
	}
	if c.StripBatch <= 0 {
		c.StripBatch = d.StripBatch
	}
	if c.RewriteCost <= 0 {
		c.RewriteCost = DefaultRewriteCost
	}
	return c
}

// Edit is one change to the stored messages, as logged in the session and
// replayed by Apply. Indices are those of the messages at the time of the
// edit.
type Edit struct {
	// Layer is LayerStrip, LayerDrop or LayerSummary (a compaction).
	Layer string `json:"layer"`
	// Blocks are the rewritten tool results of a strip or drop.
	Blocks []BlockEdit `json:"blocks,omitempty"`
	// Keep is, for a compaction, the index of the first message kept; for
	// a rewind, the number of messages kept.
	Keep int `json:"keep,omitempty"`
	// Summary is, for a compaction, the summary block put before the kept
	// messages (merged into the first kept message when that is a user
	// message, so roles still alternate).
	Summary *llm.Block `json:"summary,omitempty"`
	// Unthink removes the reasoning blocks of every assistant message
	// after the first one edited (for a compaction: of every kept
	// message): their prefix changed, so a preserved-thinking model would
	// reject or drop them.
	Unthink bool `json:"unthink,omitempty"`
	// Close closes the pending tool round after the edit (see
	// closeRound): set with Unthink inside a turn, whose latest
	// assistant message lost the thinking the API demands of it.
	Close bool `json:"close,omitempty"`
	// Messages are, for a repair, the messages that replace those from
	// Keep on (see Repair).
	Messages []llm.Message `json:"messages,omitempty"`
}

// BlockEdit replaces the content of one tool result, the input of one
// tool call, or the text of one text block.
type BlockEdit struct {
	Message int             `json:"message"`
	Block   int             `json:"block"`
	Content string          `json:"content,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"` // a tool call's stubbed input
	Text    string          `json:"text,omitempty"`  // a folded or trimmed text block
	// Layer, when set, is recorded on the block instead of the edit's
	// (a fold or a trim inside a strip).
	Layer string `json:"block_layer,omitempty"`
	// Unimage removes the image of a tool result, or turns an image block
	// into the text block Text (an old image is never resent in full).
	Unimage bool `json:"unimage,omitempty"`
}

// want is the block type an edit applies to.
func (be BlockEdit) want() llm.BlockType {
	switch {
	case be.Unimage && be.Text != "":
		return llm.BlockImage
	case be.Input != nil:
		return llm.BlockToolUse
	case be.Text != "":
		return llm.BlockText
	}
	return llm.BlockToolResult
}

// History is the stored conversation of one session. It is not safe for
// concurrent use.
type History struct {
	cfg   Config
	msgs  []llm.Message
	est   []int // Estimate of each message
	total int   // sum of est

	// floor is the index of the message holding the summary; it and
	// everything before it are never touched. -1 before any compaction.
	floor int

	// The last observed usage and the estimate of the messages it covered.
	observed   bool
	prompt     int
	estAtUsage int

	spills []string // spill files written since the last Sweep

	writeCache map[string][]Write // Writes by tool input (inputKey)
	settled    map[string]bool    // old inputs the strip left alone for good

	// Compaction backoff (Fit): after a failure, the next attempts wait
	// compactWait steps (doubling up to maxCompactWait).
	compactWait, compactSkip int

	// edited is the first message an edit changed since the last
	// observed request, or -1 (Stable).
	edited int

	// turnSteps counts the assistant messages stored since the user's
	// latest prompt: the steps of the turn so far.
	turnSteps int

	// reserve is the part of the window kept for the reply (Config.Reserve,
	// at most MaxReserve of it); cfg.Window is what is left.
	reserve int

	// Statistics for the benchmark and the UI.
	stats Stats
}

// Stats counts what the layers did.
type Stats struct {
	Caps, Strips, Drops, Compactions int // edits applied (Strips and Drops count batches)
	Unthought                        int // assistant messages whose reasoning an edit removed
	Closes                           int // open tool rounds an edit closed (Edit.Close)
}

// New returns an empty history.
func New(cfg Config) *History {
	h := &History{cfg: cfg.withDefaults(), floor: -1, edited: -1}
	w := h.cfg.Window
	h.cfg.Reserve = 0
	h.reserve = reserveOf(cfg.Reserve, w)
	h.cfg.Window = w - h.reserve
	return h
}

// reserveOf is the reserve a window of w tokens keeps for replies of up
// to maxTokens: all of it, but never more than half the window.
func reserveOf(maxTokens, w int) int {
	return max(0, min(maxTokens, w/2))
}

// Reserve returns the part of the window kept free for the reply
// (Config.Reserve, at most half the window): 0 when none was asked for.
func (h *History) Reserve() int { return h.reserve }

// SetReserve changes the reply's reserve to maxTokens (at most half the
// window), for a session whose output limit was raised: the working
// window shrinks by what the reserve grows. A history kept without a
// reserve (Config.Reserve 0: the benchmark, tests) stays without one.
func (h *History) SetReserve(maxTokens int) {
	if h.reserve == 0 {
		return
	}
	full := h.cfg.Window + h.reserve
	h.reserve = reserveOf(maxTokens, full)
	h.cfg.Window = full - h.reserve
}

// ReplyRoom is what the window leaves for the reply above the next
// request's prompt: the window less the prompt's estimate (Tokens), a
// twentieth of the window (the slack the layers keep too: they cut at 19/20
// of the working window), and half of what was estimated rather than
// counted (the messages added since the last usage: code and JSON take
// more tokens than the 4-chars estimate says, llmtest's counter a third
// more). It may be less than the reserve; the agent never asks for less
// than that.
func (h *History) ReplyRoom() int {
	full := h.cfg.Window + h.reserve
	guessed := h.total
	if h.observed {
		guessed = max(0, h.total-h.estAtUsage)
	}
	return full - h.Tokens() - full/20 - guessed/2
}

// Config returns the effective configuration (defaults filled in).
func (h *History) Config() Config { return h.cfg }

// Stats returns what the layers have done so far.
func (h *History) Stats() Stats { return h.stats }

// Messages returns the stored messages to send. The slice is a copy; the
// messages' blocks must be treated as read-only. Later layer edits never
// change what an earlier call returned.
func (h *History) Messages() []llm.Message {
	return append([]llm.Message(nil), h.msgs...)
}

// Stable is llm.Request.Stable for the next request: how many leading
// messages the edits since the last observed request left as they were
// (0 when nothing was edited).
func (h *History) Stable() int {
	return max(0, h.edited)
}

// touched records that an edit changed message i and those after it.
func (h *History) touched(i int) {
	if h.edited < 0 || i < h.edited {
		h.edited = max(0, i)
	}
}

// Len returns the number of stored messages.
func (h *History) Len() int { return len(h.msgs) }

// Append stores m (its block slice is copied).
func (h *History) Append(m llm.Message) {
	m.Blocks = append([]llm.Block(nil), m.Blocks...)
	e := Estimate(m)
	h.msgs = append(h.msgs, m)
	h.est = append(h.est, e)
	h.total += e
	switch {
	case m.Role == llm.RoleAssistant:
		h.turnSteps++
	case h.AtBoundary():
		h.turnSteps = 0
	}
}

// RewriteCostOf is Config.RewriteCost for a model's prices: a provider
// with no cache-write premium (OpenAI, DeepSeek) writes at the input
// price. An unknown price gives DefaultRewriteCost.
func RewriteCostOf(p *llm.Price) float64 {
	if p == nil || p.CacheRead <= 0 {
		return DefaultRewriteCost
	}
	w := p.CacheWrite
	if w <= 0 {
		w = p.Input
	}
	return max(0.1, (w-p.CacheRead)/p.CacheRead)
}

// Observe records the provider's usage of the reply to the request built
// from the current Messages: from now on Tokens is that count plus the
// estimate of what changed since.
func (h *History) Observe(u llm.Usage) {
	h.edited = -1
	if u.Prompt() <= 0 {
		return
	}
	h.observed = true
	h.prompt = u.Prompt()
	h.estAtUsage = h.total
}

// Tokens returns the size of the next request's prompt: the last observed
// usage plus the estimate of the messages added or rewritten since, or the
// estimate of everything when no usage has been observed.
func (h *History) Tokens() int {
	if !h.observed {
		return h.total
	}
	return max(0, h.prompt+h.total-h.estAtUsage)
}

// TokensFrom is the estimate of the stored messages from index i on: what
// a request cut before message i leaves out.
func (h *History) TokensFrom(i int) int {
	n := 0
	for _, e := range h.est[max(i, 0):] {
		n += e
	}
	return n
}

// MessageTokens is the estimate of the stored messages alone (no system
// prompt or tools): what a compaction can shrink.
func (h *History) MessageTokens() int { return h.total }

// budget returns CompactAt × Window in tokens.
func (h *History) budget() int { return int(h.cfg.CompactAt * float64(h.cfg.Window)) }

// NeedsCompact reports whether Tokens is over CompactAt × Window, unless
// the strategy never compacts.
func (h *History) NeedsCompact() bool {
	return !h.layers().NoCompact && h.Tokens() > h.budget()
}

// Floor returns the index of the message holding the summary, or -1.
func (h *History) Floor() int { return h.floor }

// setBlock rewrites one block's content, copying the message first so that
// slices handed out by Messages stay unchanged.
func (h *History) setBlock(be BlockEdit, layer string) {
	mi := be.Message
	m := h.msgs[mi]
	m.Blocks = append([]llm.Block(nil), m.Blocks...)
	switch be.want() {
	case llm.BlockToolUse:
		m.Blocks[be.Block].Input = be.Input
	case llm.BlockText:
		m.Blocks[be.Block].Text = be.Text
	case llm.BlockImage:
		m.Blocks[be.Block] = llm.Block{Type: llm.BlockText, Text: be.Text}
	default:
		m.Blocks[be.Block].Content = be.Content
		if be.Unimage {
			m.Blocks[be.Block].Image = nil
		}
	}
	if be.Layer != "" {
		layer = be.Layer
	}
	m.Blocks[be.Block].Layer = layer
	h.msgs[mi] = m
	e := Estimate(m)
	h.total += e - h.est[mi]
	h.est[mi] = e
}

// Apply replays a logged edit.
func (h *History) Apply(e Edit) error {
	switch e.Layer {
	case LayerStrip, LayerDrop:
		for _, be := range e.Blocks {
			if be.Message <= h.floor || be.Message >= len(h.msgs) {
				return fmt.Errorf("history edit: message %d out of range (have %d, summary at %d)", be.Message, len(h.msgs), h.floor)
			}
			m := h.msgs[be.Message]
			want := be.want()
			if be.Block < 0 || be.Block >= len(m.Blocks) || m.Blocks[be.Block].Type != want {
				return fmt.Errorf("history edit: message %d has no %s at block %d", be.Message, want, be.Block)
			}
		}
		first := len(h.msgs)
		for _, be := range e.Blocks {
			h.setBlock(be, e.Layer)
			first = min(first, be.Message)
		}
		h.touched(first)
		if e.Unthink {
			h.unthinkFrom(first + 1)
		}
		if e.Close {
			h.closeRound()
		}
		if e.Layer == LayerStrip {
			h.stats.Strips++
		} else {
			h.stats.Drops++
		}
		return nil
	case LayerRewind:
		if e.Keep <= h.floor || e.Keep > len(h.msgs) {
			return fmt.Errorf("history edit: rewind to message %d of %d (summary at %d)", e.Keep, len(h.msgs), h.floor)
		}
		for _, est := range h.est[e.Keep:] {
			h.total -= est
		}
		h.msgs, h.est = h.msgs[:e.Keep:e.Keep], h.est[:e.Keep:e.Keep]
		h.touched(e.Keep)
		return nil
	case LayerRepair:
		return h.applyRepair(e)
	case LayerSummary:
		if e.Summary == nil {
			return fmt.Errorf("history edit: compaction without a summary")
		}
		if e.Keep < 0 || e.Keep > len(h.msgs) {
			return fmt.Errorf("history edit: compaction keeps from message %d of %d", e.Keep, len(h.msgs))
		}
		h.compact(e.Keep, *e.Summary)
		h.touched(0)
		if e.Unthink {
			h.unthinkFrom(0)
		}
		if e.Close {
			h.closeRound()
		}
		h.stats.Compactions++
		return nil
	}
	return fmt.Errorf("history edit: unknown layer %q", e.Layer)
}

// unthinkFrom removes the reasoning blocks of the messages from index i on.
func (h *History) unthinkFrom(i int) {
	for ; i < len(h.msgs); i++ {
		if !h.msgs[i].HasThinking() {
			continue
		}
		h.touched(i)
		m := h.msgs[i].WithoutThinking()
		h.msgs[i] = m
		e := Estimate(m)
		h.total += e - h.est[i]
		h.est[i] = e
		h.stats.Unthought++
	}
}

// layers are the strategy's choices.
func (h *History) layers() Layers { return h.cfg.Strategy.Layers() }

// appendOnly reports whether edits must remove the reasoning after them.
func (h *History) appendOnly() bool { return h.layers().AppendOnly }

// AppendOnly reports whether the strategy edits only at turn boundaries,
// each edit removing the reasoning after it: a compaction must too.
func (h *History) AppendOnly() bool { return h.appendOnly() }

// SetWindow lowers the working window to tokens for the rest of the
// session (a provider's real limit on the prompt, learned from an
// overflow). It never raises it.
func (h *History) SetWindow(tokens int) {
	if tokens > 0 && tokens < h.cfg.Window {
		h.cfg.Window = tokens
	}
}

// ObservePrompt records a prompt size the provider stated for the request
// built from the current Messages (as a "prompt is too long: N tokens"
// error does): like Observe, it corrects the estimate.
func (h *History) ObservePrompt(tokens int) {
	if tokens <= 0 {
		return
	}
	h.observed, h.prompt, h.estAtUsage = true, tokens, h.total
}

func (h *History) compact(keep int, summary llm.Block) {
	summary.Layer = LayerSummary
	kept := append([]llm.Message(nil), h.msgs[keep:]...)
	unfold(h.msgs[min(h.floor+1, keep):keep], kept)
	var msgs []llm.Message
	if len(kept) > 0 && kept[0].Role == llm.RoleUser {
		first := kept[0]
		first.Blocks = append([]llm.Block{summary}, first.Blocks...)
		msgs = append(msgs, first)
		kept = kept[1:]
	} else {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{summary}})
	}
	msgs = append(msgs, kept...)
	h.msgs = h.msgs[:0:0]
	h.est, h.total = nil, 0
	for _, m := range msgs {
		h.msgs = append(h.msgs, m)
		e := Estimate(m)
		h.est = append(h.est, e)
		h.total += e
	}
	h.floor = 0
}
