package replay

import (
	"hash/maphash"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/cacheplan"
)

// CharsPerToken is the ratio the replay counts tokens with: measured on the
// 100 mini-swe-agent trajectories (their text over their recorded
// prompt_tokens is 3.31).
const CharsPerToken = 3.31

// Tokens returns the replay's token count of n chars.
func Tokens(chars int) int { return int(float64(chars)/CharsPerToken + 0.5) }

// Pricing names.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// Cache constants of the providers.
const (
	minCacheable   = 1024 // tokens: shorter prefixes are never cached
	openAIStep     = 128  // OpenAI caches in 128-token steps past the minimum
	lookback       = 20   // Anthropic: blocks a breakpoint looks back
	maxBreakpoints = 4
)

// Prices per million tokens: Claude Sonnet 4.5 and GPT-5 list prices.
var prices = map[string]llm.Price{
	Anthropic: {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	OpenAI:    {Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25},
}

// block is one unit of a request as the cache sees it.
type block struct {
	hash   uint64 // of this block and everything before it
	tokens int
	role   llm.Role // "" for tools and system
	kind   string
	stored bool // a stored message block (not the reminder)
	ref    cacheplan.Ref
}

var seed = maphash.MakeSeed()

// flatten lays req out as the provider reads it: tools, system, then the
// stored messages' blocks, then the reminder.
func flatten(req *llm.Request) []block {
	var out []block
	var h uint64
	add := func(role llm.Role, kind string, stored bool, chars int, parts ...string) *block {
		var mh maphash.Hash
		mh.SetSeed(seed)
		var prev [8]byte
		for i := range prev {
			prev[i] = byte(h >> (8 * i))
		}
		mh.Write(prev[:])
		mh.WriteString(string(role))
		mh.WriteString(kind)
		for _, p := range parts {
			mh.WriteString(p)
			mh.WriteByte(0)
		}
		h = mh.Sum64()
		out = append(out, block{hash: h, tokens: Tokens(chars) + 3, role: role, kind: kind, stored: stored})
		return &out[len(out)-1]
	}
	for _, t := range req.Tools {
		add("", "tool", false, len(t.Name)+len(t.Description)+len(t.Schema), t.Name, t.Description, string(t.Schema))
	}
	if req.System != "" {
		add("", "system", false, len(req.System), req.System)
	}
	for mi, m := range req.Messages {
		for bi, b := range m.Blocks {
			var nb *block
			switch b.Type {
			case llm.BlockText:
				nb = add(m.Role, "text", true, len(b.Text), b.Text)
			case llm.BlockThinking:
				nb = add(m.Role, "thinking", true, len(b.Thinking), b.Thinking, b.Signature)
			case llm.BlockToolUse:
				nb = add(m.Role, "tool_use", true, len(b.ID)+len(b.Name)+len(b.Input), b.ID, b.Name, string(b.Input))
			case llm.BlockToolResult:
				nb = add(m.Role, "tool_result", true, len(b.ToolUseID)+len(b.Content), b.ToolUseID, b.Content, boolStr(b.IsError))
			}
			if nb != nil {
				nb.ref = cacheplan.Ref{Message: mi, Block: bi}
			}
		}
	}
	if req.Reminder != "" {
		add(llm.RoleUser, "text", false, len(req.Reminder), req.Reminder)
	}
	return out
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Cache is an ideal prefix cache for one session.
type Cache struct {
	pricing string
	entries map[uint64]bool
	last    []block // the latest request's blocks, for the decomposition
}

// NewCache returns an empty cache with the pricing's semantics and the
// adapter's breakpoints.
func NewCache(pricing string) *Cache {
	return &Cache{pricing: pricing, entries: map[uint64]bool{}}
}

// Request simulates sending req and returns the usage the provider would
// report (Output is left zero).
func (c *Cache) Request(req *llm.Request) llm.Usage {
	blocks := flatten(req)
	c.last = blocks
	cum := make([]int, len(blocks)+1) // cum[k]: tokens of blocks[:k]
	for i, b := range blocks {
		cum[i+1] = cum[i] + b.tokens
	}
	total := cum[len(blocks)]
	if c.pricing == OpenAI {
		hit := 0
		for k := len(blocks); k > 0; k-- {
			if c.entries[blocks[k-1].hash] {
				hit = cum[k]
				break
			}
		}
		for _, b := range blocks {
			c.entries[b.hash] = true
		}
		if hit < minCacheable {
			hit = 0
		} else {
			hit = minCacheable + (hit-minCacheable)/openAIStep*openAIStep
		}
		return llm.Usage{Input: total - hit, CacheRead: hit}
	}

	bps := anthropicBreakpoints(req, blocks)
	hit := 0
	for _, p := range bps {
		for j := p; j >= 0 && j >= p-lookback; j-- {
			if c.entries[blocks[j].hash] {
				hit = max(hit, cum[j+1])
				break
			}
		}
	}
	write := 0
	if len(bps) > 0 {
		if end := cum[bps[len(bps)-1]+1]; end > hit && end >= minCacheable {
			write = end - hit
		}
		for _, p := range bps {
			if cum[p+1] >= minCacheable {
				c.entries[blocks[p].hash] = true
			}
		}
	}
	return llm.Usage{Input: total - hit - write, CacheRead: hit, CacheWrite: write}
}

// anthropicBreakpoints returns the indices of the blocks carrying
// cache_control, in order, as the anthropic adapter places them: the
// adapter is asked, so the simulation cannot drift from what ships.
func anthropicBreakpoints(req *llm.Request, blocks []block) []int {
	plan := cacheplan.Of(req)
	tool, system, refs := plan.Tool, plan.System, plan.Blocks
	at := map[cacheplan.Ref]bool{}
	for _, r := range refs {
		at[r] = true
	}
	var bps []int
	lastTool := -1
	for i, b := range blocks {
		switch {
		case b.kind == "tool" && b.role == "":
			lastTool = i
		case b.kind == "system" && b.role == "":
			if tool && lastTool >= 0 {
				bps = append(bps, lastTool)
			}
			if system {
				bps = append(bps, i)
			}
		case b.stored && at[b.ref]:
			bps = append(bps, i)
		}
	}
	if req.System == "" && tool && lastTool >= 0 {
		bps = append([]int{lastTool}, bps...)
	}
	return bps
}

// Cost returns the dollar cost of u under the pricing.
func Cost(pricing string, u llm.Usage) float64 { return prices[pricing].Cost(u) }
