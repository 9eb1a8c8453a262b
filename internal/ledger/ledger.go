package ledger

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// Kind is a kind of prompt content.
type Kind string

// The kinds of content a prompt is made of.
const (
	System      Kind = "system"       // the system prompt
	Tools       Kind = "tools"        // the tool definitions
	ToolResults Kind = "tool_results" // what the tools returned
	Assistant   Kind = "assistant"    // the model's earlier text and tool calls
	User        Kind = "user"         // the user's own text (and images)
	Reminders   Kind = "reminders"    // per-turn facts and the harness's notes to the model
	Thinking    Kind = "thinking"     // earlier reasoning blocks sent back
	Summaries   Kind = "summaries"    // compaction handoff notes
)

// Kinds lists every kind in display order.
var Kinds = []Kind{System, Tools, ToolResults, Assistant, User, Reminders, Thinking, Summaries}

// Purposes of a request.
const (
	PurposeStep    = "step"    // a step of the agent loop
	PurposeCompact = "compact" // a compaction's summary request
	// PurposeSampling is an MCP server's sampling request, sent with
	// the session's model on the server's behalf.
	PurposeSampling = "mcp-sampling"
)

// DefaultTTL is Anthropic's default prompt-cache lifetime: a cached
// prefix not read for five minutes is gone.
const DefaultTTL = 5 * time.Minute

// Causes of an expensive request, Reason.Cause.
const (
	CauseModelSwitch  = "model_switch"  // the model changed: caches are per model
	CauseToolsChange  = "tools_change"  // the tool definitions changed
	CauseSystemChange = "system_change" // the system prompt changed
	CauseEdit         = "edit"          // history was edited at message N by a layer
	CauseIdleExpiry   = "idle_expiry"   // idle past the cache TTL
	CauseCacheMiss    = "cache_miss"    // less was read from the cache than expected, cause unknown
	CauseLargeResult  = "large_result"  // a tool result of many tokens arrived
	CauseCompaction   = "compaction"    // the summary request of a compaction
	CauseThinking     = "thinking"      // most of the output was reasoning
)

// Tiers are the input tokens of a request by cache tier, as the provider
// reported them.
type Tiers struct {
	CacheRead  int `json:"cache_read_tokens"`
	CacheWrite int `json:"cache_write_tokens"`
	Uncached   int `json:"uncached_tokens"`
}

// Total is the whole prompt.
func (t Tiers) Total() int { return t.CacheRead + t.CacheWrite + t.Uncached }

func (t Tiers) add(u Tiers) Tiers {
	return Tiers{t.CacheRead + u.CacheRead, t.CacheWrite + u.CacheWrite, t.Uncached + u.Uncached}
}

// Part is one kind's share of the input: tokens (estimated, scaled to the
// reported total), their tiers by position, and their dollars.
type Part struct {
	Tokens int `json:"tokens"`
	Tiers
	USD float64 `json:"usd"`
}

// Reason says in words why a request cost more than it needed to.
type Reason struct {
	Cause string `json:"cause"`
	Text  string `json:"text"`
	// Tokens are the tokens the cause accounts for (those paid again
	// after a miss; a result's size).
	Tokens int `json:"tokens,omitempty"`
	// USD is what the cause cost: for a miss the difference from reading
	// those tokens from the cache, else the tokens' own price.
	USD float64 `json:"usd,omitempty"`
	// Message and Layer locate an edit; Tool names a large result's tool.
	Message int    `json:"message,omitempty"`
	Layer   string `json:"layer,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// Turn is the user turn the request belonged to (set in summaries).
	Turn int `json:"turn,omitempty"`
}

// Record is the ledger of one model request.
type Record struct {
	Time    time.Time `json:"time"`
	Turn    int       `json:"turn"`
	Agent   string    `json:"agent,omitempty"` // "" for the main agent, else a sub-agent's label
	Purpose string    `json:"purpose"`
	Model   string    `json:"model"`
	// InputTotal is the prompt the provider counted: the sum of Tiers.
	InputTotal int   `json:"input_total"`
	Tiers      Tiers `json:"tiers"`
	Output     int   `json:"output_tokens"`
	Reasoning  int   `json:"reasoning_tokens,omitempty"`
	// ReasoningEstimated is set when the provider did not count the
	// reasoning tokens and they were estimated from the reply's thinking.
	ReasoningEstimated bool `json:"reasoning_estimated,omitempty"`
	// Kinds is the estimated split of InputTotal by content kind.
	Kinds          map[Kind]Part `json:"kinds"`
	KindsEstimated bool          `json:"kinds_estimated"`
	InputUSD       float64       `json:"input_usd"`
	OutputUSD      float64       `json:"output_usd"`
	USD            float64       `json:"usd"`
	PriceKnown     bool          `json:"price_known"`
	Reasons        []Reason      `json:"reasons,omitempty"`
}

// Summary adds up records: a turn's, a session's, a run's.
type Summary struct {
	Requests   int           `json:"requests"`
	Turns      int           `json:"turns,omitempty"`
	InputTotal int           `json:"input_total"`
	Tiers      Tiers         `json:"tiers"`
	Output     int           `json:"output_tokens"`
	Reasoning  int           `json:"reasoning_tokens,omitempty"`
	Kinds      map[Kind]Part `json:"kinds"`
	// KindsEstimated labels Kinds: the provider counts tokens, not kinds.
	KindsEstimated bool    `json:"kinds_estimated"`
	InputUSD       float64 `json:"input_usd"`
	OutputUSD      float64 `json:"output_usd"`
	USD            float64 `json:"usd"`
	// PriceKnown is false when any request's model had no known price
	// (its dollars count as 0).
	PriceKnown bool `json:"price_known"`
	// CompactionUSD is what the compactions' own requests cost.
	CompactionUSD float64 `json:"compaction_usd,omitempty"`
	// Reasons are the causes found, the costliest first.
	Reasons []Reason `json:"reasons,omitempty"`
}

// Summarize adds up rs.
func Summarize(rs []Record) Summary {
	s := Summary{Kinds: map[Kind]Part{}, KindsEstimated: true, PriceKnown: true}
	turns := map[int]bool{}
	for _, r := range rs {
		s.Requests++
		turns[r.Turn] = true
		s.InputTotal += r.InputTotal
		s.Tiers = s.Tiers.add(r.Tiers)
		s.Output += r.Output
		s.Reasoning += r.Reasoning
		for k, p := range r.Kinds {
			q := s.Kinds[k]
			q.Tokens += p.Tokens
			q.Tiers = q.Tiers.add(p.Tiers)
			q.USD += p.USD
			s.Kinds[k] = q
		}
		s.InputUSD += r.InputUSD
		s.OutputUSD += r.OutputUSD
		s.USD += r.USD
		if !r.PriceKnown {
			s.PriceKnown = false
		}
		if r.Purpose == PurposeCompact {
			s.CompactionUSD += r.USD
		}
		for _, why := range r.Reasons {
			why.Turn = r.Turn
			s.Reasons = append(s.Reasons, why)
		}
	}
	s.Turns = len(turns)
	sort.SliceStable(s.Reasons, func(i, j int) bool { return s.Reasons[i].USD > s.Reasons[j].USD })
	return s
}

// Largest is the kind with the most input tokens ("" when none).
func (s Summary) Largest() Kind {
	var best Kind
	for _, k := range Kinds {
		if p, ok := s.Kinds[k]; ok && p.Tokens > 0 && (best == "" || p.Tokens > s.Kinds[best].Tokens) {
			best = k
		}
	}
	return best
}

// Call is one completed model request, as the agent hands it to a Book.
type Call struct {
	Request *llm.Request
	Reply   *llm.Reply // may be nil (the usage alone)
	Usage   llm.Usage
	Start   time.Time // when the request was sent (Book.Now)
	Agent   string
	Purpose string
}

// Book is one session's ledger. Safe for concurrent use (sub-agents run
// side by side).
type Book struct {
	// Price returns a model's price per million tokens and whether it is
	// known; nil: every price unknown.
	Price func(model string) (llm.Price, bool)
	// Clock is the time source (tests put a fake one in); nil: time.Now.
	Clock func() time.Time
	// TTL is the cache lifetime an idle gap is measured against.
	TTL time.Duration

	mu      sync.Mutex
	records []Record
	turn    int
	prev    map[string]*snapshot // by agent label
	caching map[string]bool      // a cache tier was ever reported, by agent
}

// New returns an empty Book pricing with price.
func New(price func(model string) (llm.Price, bool)) *Book {
	return &Book{Price: price, TTL: DefaultTTL}
}

// Now is the Book's clock.
func (b *Book) Now() time.Time {
	if b == nil || b.Clock == nil {
		return time.Now()
	}
	return b.Clock()
}

// StartTurn starts the next user turn (the main agent's; a sub-agent's
// requests belong to the turn that started it).
func (b *Book) StartTurn() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turn++
}

// Load puts the records of a session's log into b (resume): the turn
// count goes on from them, and the time and model of each agent's last
// request are known, so an idle gap or a model switch across the resume is
// still named.
func (b *Book) Load(rs []Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.records = append(b.records, rs...)
	for _, r := range rs {
		b.turn = max(b.turn, r.Turn)
		if b.prev == nil {
			b.prev = map[string]*snapshot{}
		}
		b.prev[r.Agent] = &snapshot{at: r.Time, model: r.Model, cached: r.Tiers.CacheRead + r.Tiers.CacheWrite, prompt: r.InputTotal, resumed: true}
		if r.Tiers.CacheRead+r.Tiers.CacheWrite > 0 {
			if b.caching == nil {
				b.caching = map[string]bool{}
			}
			b.caching[r.Agent] = true
		}
	}
}

// Records returns a copy of every record so far.
func (b *Book) Records() []Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Record(nil), b.records...)
}

// Session sums every record.
func (b *Book) Session() Summary {
	s := Summarize(b.Records())
	return s
}

// Turn sums the records of turn n.
func (b *Book) Turn(n int) Summary {
	var rs []Record
	for _, r := range b.Records() {
		if r.Turn == n {
			rs = append(rs, r)
		}
	}
	return Summarize(rs)
}

// CurrentTurn is the number of the latest turn.
func (b *Book) CurrentTurn() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.turn
}

// Since sums the records after the first n (a run's own requests after a
// resume).
func (b *Book) Since(n int) Summary {
	rs := b.Records()
	if n > len(rs) {
		n = len(rs)
	}
	return Summarize(rs[n:])
}

// Len is how many records there are.
func (b *Book) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.records)
}

// snapshot is what a Book remembers of an agent's previous request, to
// say why this one missed the cache.
type snapshot struct {
	at      time.Time // when its reply ended
	model   string
	system  uint64
	tools   uint64
	names   []string
	msgs    [][]uint64 // a hash per block of each message
	cached  int        // the tokens the provider read or wrote to its cache
	prompt  int
	resumed bool // known from the log only: no hashes
}

// Add accounts one request and returns its record.
func (b *Book) Add(c Call) Record {
	price, known := llm.Price{}, false
	if b.Price != nil {
		price, known = b.Price(c.Request.Model)
	}
	u := c.Usage
	segs := segments(c.Request)
	tiers := Tiers{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Uncached: u.Input}
	scale(segs, tiers.Total())
	place(segs, tiers, price)
	r := Record{
		Time: b.Now(), Agent: c.Agent, Purpose: c.Purpose, Model: c.Request.Model,
		InputTotal: tiers.Total(), Tiers: tiers, Output: u.Output, Reasoning: u.Reasoning,
		Kinds: map[Kind]Part{}, KindsEstimated: true, PriceKnown: known,
	}
	if r.Purpose == "" {
		r.Purpose = PurposeStep
	}
	for _, s := range segs {
		p := r.Kinds[s.kind]
		p.Tokens += s.tokens
		p.Tiers = p.Tiers.add(s.tiers)
		p.USD += s.usd
		r.Kinds[s.kind] = p
	}
	if r.Reasoning == 0 && c.Reply != nil {
		if est := thinkingTokens(c.Reply.Message); est > 0 {
			r.Reasoning, r.ReasoningEstimated = min(est, u.Output), true
		}
	}
	in := u
	in.Output, in.Reasoning = 0, 0
	r.InputUSD = price.Cost(in)
	r.OutputUSD = price.Cost(llm.Usage{Output: u.Output})
	r.USD = r.InputUSD + r.OutputUSD

	snap := takeSnapshot(c.Request, r.Time, tiers)
	b.mu.Lock()
	defer b.mu.Unlock()
	r.Turn = b.turn
	if b.prev == nil {
		b.prev = map[string]*snapshot{}
	}
	if b.caching == nil {
		b.caching = map[string]bool{}
	}
	prev := b.prev[c.Agent]
	if tiers.CacheRead+tiers.CacheWrite > 0 {
		b.caching[c.Agent] = true
	}
	start := c.Start
	if start.IsZero() {
		start = r.Time
	}
	r.Reasons = reasons(reasonInput{
		req: c.Request, rec: &r, prev: prev, now: snap, segs: segs, price: price,
		caching: b.caching[c.Agent], start: start, ttl: b.TTL,
	})
	b.prev[c.Agent] = snap
	b.records = append(b.records, r)
	return r
}

// segment is a run of prompt content of one kind, in wire order.
type segment struct {
	kind   Kind
	msg    int // message index, -1 for the tools, system and reminder
	block  int
	id     string // a tool result's call id
	tokens int
	tiers  Tiers
	usd    float64
}

// Framing the provider adds, in tokens (as package history estimates).
const (
	messageOverhead = 4
	blockOverhead   = 3
	toolOverhead    = 12
)

func estimate(s string) int { return history.EstimateText(s) }

// segments splits req's prompt into kinds, in the order a prefix cache
// reads it: tools, system, messages, the reminder.
func segments(req *llm.Request) []segment {
	var out []segment
	for _, t := range req.Tools {
		out = append(out, segment{kind: Tools, msg: -1, tokens: toolOverhead + estimate(t.Name+t.Description+string(t.Schema))})
	}
	if req.System != "" {
		out = append(out, segment{kind: System, msg: -1, tokens: estimate(req.System)})
	}
	for i, m := range req.Messages {
		for j, bl := range m.Blocks {
			k, n := blockKind(m.Role, bl), blockOverhead
			switch bl.Type {
			case llm.BlockText:
				n += estimate(bl.Text)
			case llm.BlockThinking:
				n += estimate(bl.Thinking + bl.Signature)
			case llm.BlockRedactedThinking:
				n += estimate(bl.Data)
			case llm.BlockToolUse:
				n += toolOverhead + estimate(bl.Name+string(bl.Input))
			case llm.BlockToolResult:
				n += toolOverhead + estimate(bl.Content)
			}
			if bl.Image != nil {
				n += bl.Image.Tokens()
			}
			if j == 0 {
				n += messageOverhead
			}
			out = append(out, segment{kind: k, msg: i, block: j, id: bl.ToolUseID, tokens: n})
		}
	}
	if req.Reminder != "" {
		out = append(out, segment{kind: Reminders, msg: -1, tokens: estimate(req.Reminder)})
	}
	return out
}

// blockKind is the kind of one stored block.
func blockKind(role llm.Role, b llm.Block) Kind {
	switch {
	case b.IsThinking():
		return Thinking
	case b.Type == llm.BlockToolResult:
		return ToolResults
	case b.Type == llm.BlockToolUse:
		return Assistant
	case b.Layer == history.LayerSummary:
		return Summaries
	case b.Layer == history.LayerReminder || b.Layer == llm.LayerFeedback || b.Layer == history.LayerFold:
		return Reminders
	case role == llm.RoleAssistant:
		return Assistant
	}
	return User
}

// scale makes the segments' tokens add up to total, keeping their
// proportions (largest remainders get the rounding).
func scale(segs []segment, total int) {
	est := 0
	for _, s := range segs {
		est += s.tokens
	}
	if len(segs) == 0 || total <= 0 {
		for i := range segs {
			segs[i].tokens = 0
		}
		return
	}
	if est == 0 {
		segs[len(segs)-1].tokens = total
		return
	}
	type rem struct {
		i int
		r float64
	}
	rems := make([]rem, len(segs))
	sum := 0
	for i, s := range segs {
		exact := float64(s.tokens) * float64(total) / float64(est)
		segs[i].tokens = int(exact)
		sum += segs[i].tokens
		rems[i] = rem{i, exact - float64(int(exact))}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; sum < total; k = (k + 1) % len(rems) {
		segs[rems[k].i].tokens++
		sum++
	}
}

// place lays the tiers over the segments by position — the cache reads
// the prompt's head, writes the part up to its last breakpoint, and the
// rest is uncached — and prices each segment.
func place(segs []segment, t Tiers, p llm.Price) {
	pos := 0
	for i := range segs {
		n := segs[i].tokens
		var tr Tiers
		for n > 0 {
			switch {
			case pos < t.CacheRead:
				d := min(n, t.CacheRead-pos)
				tr.CacheRead += d
				n, pos = n-d, pos+d
			case pos < t.CacheRead+t.CacheWrite:
				d := min(n, t.CacheRead+t.CacheWrite-pos)
				tr.CacheWrite += d
				n, pos = n-d, pos+d
			default:
				tr.Uncached += n
				pos += n
				n = 0
			}
		}
		segs[i].tiers = tr
		segs[i].usd = p.Cost(llm.Usage{Input: tr.Uncached, CacheRead: tr.CacheRead, CacheWrite: tr.CacheWrite})
	}
}

func thinkingTokens(m llm.Message) int {
	n := 0
	for _, b := range m.Blocks {
		if b.Type == llm.BlockThinking {
			n += estimate(b.Thinking)
		}
	}
	return n
}

func hash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func takeSnapshot(req *llm.Request, at time.Time, t Tiers) *snapshot {
	s := &snapshot{at: at, model: req.Model, system: hash(req.System), cached: t.CacheRead + t.CacheWrite, prompt: t.Total()}
	var tools []string
	for _, tl := range req.Tools {
		s.names = append(s.names, tl.Name)
		tools = append(tools, tl.Name, tl.Description, string(tl.Schema))
	}
	s.tools = hash(tools...)
	for _, m := range req.Messages {
		hs := make([]uint64, len(m.Blocks))
		for j, bl := range m.Blocks {
			bl.Layer = "" // metadata, never sent
			raw, _ := json.Marshal(bl)
			hs[j] = hash(string(m.Role), string(raw))
		}
		s.msgs = append(s.msgs, hs)
	}
	return s
}

type reasonInput struct {
	req     *llm.Request
	rec     *Record
	prev    *snapshot
	now     *snapshot
	segs    []segment
	price   llm.Price
	caching bool
	start   time.Time
	ttl     time.Duration
}

// largeResult is the size from which a newly arrived tool result is named
// as a cause: many tokens, or a large share of a sizeable prompt.
func largeResult(tokens, prompt int) bool {
	return tokens >= 4096 || tokens >= 1024 && tokens*10 >= prompt*3
}

// reasons finds the causes of a request's cost.
func reasons(in reasonInput) []Reason {
	var out []Reason
	r := in.rec
	if why, ok := missReason(in); ok {
		out = append(out, why)
	}
	// Tool results that arrived since the previous request.
	from := 0
	if in.prev != nil && !in.prev.resumed {
		from = len(in.prev.msgs)
	}
	names := map[string]string{}
	for _, m := range in.req.Messages {
		for _, c := range m.ToolCalls() {
			names[c.ID] = c.Name
		}
	}
	for _, s := range in.segs {
		if s.kind != ToolResults || s.msg < from || !largeResult(s.tokens, r.InputTotal) {
			continue
		}
		tool := names[s.id]
		if tool == "" {
			tool = "a tool"
		}
		chars := len(in.req.Messages[s.msg].Blocks[s.block].Content)
		out = append(out, Reason{Cause: CauseLargeResult, Tool: tool, Message: s.msg, Tokens: s.tokens, USD: s.usd,
			Text: fmt.Sprintf("a large tool result: %s returned %d chars (about %d tokens, %d%% of this request), carried in every later request until a context layer cuts it",
				tool, chars, s.tokens, percent(s.tokens, r.InputTotal))})
	}
	if r.Purpose == PurposeCompact {
		out = append(out, Reason{Cause: CauseCompaction, Tokens: r.InputTotal + r.Output, USD: r.USD,
			Text: fmt.Sprintf("a compaction's own cost: the summary request read %d tokens and wrote %d", r.InputTotal, r.Output)})
	}
	if r.Reasoning >= 1024 && r.Reasoning*2 >= r.Output {
		word := "were"
		if r.ReasoningEstimated {
			word = "were about"
		}
		usd := in.price.Cost(llm.Usage{Output: r.Reasoning})
		out = append(out, Reason{Cause: CauseThinking, Tokens: r.Reasoning, USD: usd,
			Text: fmt.Sprintf("thinking: %d of the %d output tokens %s reasoning", r.Reasoning, r.Output, word)})
	}
	return out
}

// missReason says why the cache returned less than the previous request
// left in it, when it did by enough to matter.
func missReason(in reasonInput) (Reason, bool) {
	prev, r := in.prev, in.rec
	if prev == nil || !in.caching {
		return Reason{}, false
	}
	expected := prev.cached
	if expected == 0 {
		expected = prev.prompt // automatic prefix caches (OpenAI) write nothing
	}
	lost := expected - r.Tiers.CacheRead
	if lost < 256 || lost*5 < expected {
		return Reason{}, false
	}
	// Paying again costs the write (or input) price instead of the read.
	again := in.price.Input
	if r.Tiers.CacheWrite > 0 {
		again = in.price.CacheWrite
	}
	usd := float64(lost) * (again - in.price.CacheRead) / 1e6
	why := Reason{Tokens: lost, USD: max(usd, 0)}
	paid := fmt.Sprintf("%d tokens the cache held were paid again", lost)
	gap := in.start.Sub(prev.at)
	idle := in.ttl > 0 && gap > in.ttl
	switch {
	case prev.model != "" && prev.model != in.req.Model:
		why.Cause = CauseModelSwitch
		why.Text = fmt.Sprintf("cache miss: the model changed from %s to %s, and a provider's cache is per model: %s", prev.model, in.req.Model, paid)
		return why, true
	case prev.resumed:
		// Only time and model are known across a resume.
	case prev.tools != in.now.tools:
		why.Cause = CauseToolsChange
		why.Text = fmt.Sprintf("cache miss: the tool definitions changed (%s): everything after them was paid again, %s", toolsDiff(prev.names, in.now.names), paid)
		return why, true
	case prev.system != in.now.system:
		why.Cause = CauseSystemChange
		why.Text = "cache miss: the system prompt changed: " + paid
		return why, true
	}
	if !prev.resumed {
		if i, j, ok := firstEdit(prev.msgs, in.now.msgs); ok {
			before := 0 // estimated tokens before the edit
			for _, s := range in.segs {
				if s.msg >= 0 && s.msg < i || s.msg < 0 && s.kind != Reminders {
					before += s.tokens
				}
			}
			if !(idle && r.Tiers.CacheRead < before/2) {
				why.Cause, why.Message = CauseEdit, i
				why.Layer = editLayer(in.req, i, j)
				by := "by " + layerName(why.Layer)
				why.Text = fmt.Sprintf("cache miss: an edit at message %d %s changed the prompt from there on: %s", i, by, paid)
				return why, true
			}
		}
	}
	if idle {
		why.Cause = CauseIdleExpiry
		why.Text = fmt.Sprintf("cache miss: idle for %s since the previous request, past the cache's %s lifetime (Anthropic's default TTL): %s",
			gap.Round(time.Second), in.ttl, paid)
		return why, true
	}
	why.Cause = CauseCacheMiss
	why.Text = fmt.Sprintf("cache miss, cause unknown (the provider may have evicted the prefix or routed to another server): the cache returned %d of %d tokens; %s", r.Tiers.CacheRead, expected, paid)
	return why, true
}

// firstEdit finds the first block of prev that now differs (or is gone).
func firstEdit(prev, now [][]uint64) (msg, block int, ok bool) {
	for i, pm := range prev {
		if i >= len(now) {
			return i, 0, true
		}
		for j, h := range pm {
			if j >= len(now[i]) || now[i][j] != h {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// editLayer names the layer that last rewrote the edited block.
func editLayer(req *llm.Request, i, j int) string {
	if i >= len(req.Messages) {
		return history.LayerRewind
	}
	m := req.Messages[i]
	if j < len(m.Blocks) && m.Blocks[j].Layer != "" {
		return m.Blocks[j].Layer
	}
	for _, b := range m.Blocks {
		if b.Layer == history.LayerSummary {
			return b.Layer
		}
	}
	return ""
}

func layerName(layer string) string {
	switch layer {
	case history.LayerStrip:
		return "the strip layer (old tool results cut to stubs)"
	case history.LayerDrop:
		return "the drop layer (oldest tool results emptied to fit the window)"
	case history.LayerSummary:
		return "a compaction (history replaced by a summary)"
	case history.LayerRewind:
		return "a rewind (turns taken back)"
	case history.LayerCap:
		return "the cap layer"
	case "":
		return "harness (layer not recorded: a rewind or a restated message)"
	}
	return "the " + layer + " layer"
}

func toolsDiff(a, b []string) string {
	in := func(xs []string, x string) bool {
		for _, y := range xs {
			if y == x {
				return true
			}
		}
		return false
	}
	var parts []string
	for _, n := range b {
		if !in(a, n) {
			parts = append(parts, "+"+n)
		}
	}
	for _, n := range a {
		if !in(b, n) {
			parts = append(parts, "-"+n)
		}
	}
	if len(parts) == 0 {
		return "same names, changed definitions"
	}
	return strings.Join(parts, " ")
}

func percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return (100*n + of/2) / of
}
