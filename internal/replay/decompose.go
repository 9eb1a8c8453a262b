package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/reminder"
)

// Cache tiers of the decomposition, in report order.
const (
	TierCacheRead  = "cache reads"
	TierCacheWrite = "cache writes"
	TierUncached   = "uncached input"
	TierSummary    = "summary calls"
)

// Tiers lists the tiers in report order.
var Tiers = []string{TierCacheRead, TierCacheWrite, TierUncached, TierSummary}

// Content kinds of the decomposition, in report order. "Latest" is the
// request's last assistant message and the tool results of its last
// message; everything before is "old". Result stubs are old results a
// layer rewrote (strip or drop); old results in full are the rest (short
// ones, capped ones, and those the strip has not reached yet).
const (
	ContentOldAssistantText = "old assistant text"
	ContentLatestResult     = "latest tool result"
	ContentLatestAssistant  = "latest assistant text"
	ContentLatestCall       = "latest tool call"
	ContentTask             = "task prompt"
	ContentOldResults       = "result stubs"
	ContentOldResultsFull   = "old results in full"
	ContentOldCalls         = "old tool-call inputs"
	ContentFixed            = "system+tools+reminder"
	ContentOtherUser        = "other user text"
	ContentSummary          = "summary calls"
)

// Contents lists the content kinds in report order.
var Contents = []string{ContentOldAssistantText, ContentLatestResult, ContentLatestAssistant, ContentLatestCall,
	ContentTask, ContentOldResults, ContentOldResultsFull, ContentOldCalls, ContentFixed, ContentOtherUser, ContentSummary}

// Decomposition splits a strategy's cost (dollars) two ways: by the cache
// tier each token was billed at, and by the content it belongs to. Both
// sum to Total.
type Decomposition struct {
	Total   float64            `json:"total"`
	Tier    map[string]float64 `json:"tier"`
	Content map[string]float64 `json:"content"`
}

func newDecomposition() *Decomposition {
	return &Decomposition{Tier: map[string]float64{}, Content: map[string]float64{}}
}

// addRequest prices every block of req at the tier the cache served it
// from. A request is billed as one prefix: cache reads first, then the
// write, then uncached input (Cache.Request guarantees that order), so a
// block's tokens are split by where they fall in it.
func (d *Decomposition) addRequest(pricing string, req *llm.Request, blocks []block, u llm.Usage, task string) {
	p := prices[pricing]
	read, write := u.CacheRead, u.CacheRead+u.CacheWrite
	at, last := 0, len(req.Messages)-1
	lastAssistant := -1
	for i := last; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleAssistant {
			lastAssistant = i
			break
		}
	}
	for _, b := range blocks {
		lo, hi := at, at+b.tokens
		at = hi
		r := overlap(lo, hi, 0, read)
		w := overlap(lo, hi, read, write)
		in := b.tokens - r - w
		d.Tier[TierCacheRead] += float64(r) * p.CacheRead / 1e6
		d.Tier[TierCacheWrite] += float64(w) * p.CacheWrite / 1e6
		d.Tier[TierUncached] += float64(in) * p.Input / 1e6
		c := (float64(r)*p.CacheRead + float64(w)*p.CacheWrite + float64(in)*p.Input) / 1e6
		d.Content[classify(req, b, last, lastAssistant, task)] += c
		d.Total += c
	}
}

func (d *Decomposition) addSummary(pricing string, u llm.Usage) {
	c := Cost(pricing, u)
	d.Tier[TierSummary] += c
	d.Content[ContentSummary] += c
	d.Total += c
}

func overlap(lo, hi, a, b int) int { return max(0, min(hi, b)-max(lo, a)) }

func classify(req *llm.Request, b block, last, lastAssistant int, task string) string {
	if !b.stored {
		return ContentFixed
	}
	m := req.Messages[b.ref.Message]
	blk := m.Blocks[b.ref.Block]
	switch {
	case m.Role == llm.RoleAssistant && b.ref.Message == lastAssistant && blk.Type == llm.BlockToolUse:
		return ContentLatestCall
	case m.Role == llm.RoleAssistant && b.ref.Message == lastAssistant:
		return ContentLatestAssistant
	case m.Role == llm.RoleAssistant && blk.Type == llm.BlockToolUse:
		return ContentOldCalls
	case m.Role == llm.RoleAssistant:
		return ContentOldAssistantText
	case blk.Type == llm.BlockToolResult && b.ref.Message == last:
		return ContentLatestResult
	case blk.Type == llm.BlockToolResult && (blk.Layer == history.LayerStrip || blk.Layer == history.LayerDrop):
		return ContentOldResults
	case blk.Type == llm.BlockToolResult:
		return ContentOldResultsFull
	case blk.Type == llm.BlockText && blk.Text == task:
		return ContentTask
	}
	return ContentOtherUser
}

// taskText is the trajectory's first user text: the task prompt.
func taskText(t Trajectory) string {
	for _, m := range t.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == llm.BlockText {
				return b.Text
			}
		}
	}
	return ""
}

// FloorStub is the size a floor request keeps of an old tool result; the
// stub carries the strip layer's marker, as a real stub does.
const FloorStub = 300

// Floor costs what the model minimally needs at each step of trajs, through
// the same cache simulator: the system prompt, tools and reminder, the
// task, the last two messages in full, old tool results as FloorStub-char
// stubs, old tool calls as bare calls (name, no input), and nothing else
// (old assistant text and other user text go, with the assistant message
// that carried no call and the feedback answering it). It needs no
// compaction: it is far under any window the bench allows.
func Floor(ctx context.Context, trajs []Trajectory, pricing string) (*Decomposition, error) {
	d := newDecomposition()
	for _, t := range trajs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cache := NewCache(pricing)
		task := taskText(t)
		step := 0
		for i, m := range t.Messages {
			if m.Role != llm.RoleAssistant {
				continue
			}
			req := llm.Request{
				System: t.System, Tools: t.Tools, Messages: floorMessages(t.Messages[:i], task), Volatile: 2,
				Reminder:  reminder.Format(reminder.Facts{Time: epoch.Add(time.Duration(step) * time.Minute), Git: true, Branch: "main"}),
				SessionID: t.Name,
			}
			step++
			u := cache.Request(&req)
			d.addRequest(pricing, &req, cache.last, u, task)
		}
	}
	return d, nil
}

var bareInput = json.RawMessage(`{}`)

func floorMessages(msgs []llm.Message, task string) []llm.Message {
	keep := max(0, len(msgs)-2)
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs[:keep] {
		n := llm.Message{Role: m.Role}
		for _, b := range m.Blocks {
			switch {
			case b.Type == llm.BlockToolUse:
				b.Input = bareInput
			case b.Type == llm.BlockToolResult:
				if len(b.Content) > FloorStub {
					b.Layer = history.LayerStrip
					b.Content = b.Content[:FloorStub] + fmt.Sprintf("\n[harness strip: %d more chars of this old output removed; run the tool again to see them]", len(b.Content)-FloorStub)
				}
			case b.Type == llm.BlockText && m.Role == llm.RoleUser && b.Text == task:
			default:
				continue
			}
			n.Blocks = append(n.Blocks, b)
		}
		if len(n.Blocks) > 0 {
			out = append(out, n)
		}
	}
	return append(out, msgs[keep:]...)
}
