package history

// A Strategy says how and when the layers run. History ships two, Harness
// and Append, and asks only their Layers, never their names: the context
// benchmark's references (the seed harness, raw) are Strategies of package
// replay, run by the same code with no branch of their own here.
type Strategy interface {
	Name() string
	Layers() Layers
}

// Layers are the choices a Strategy makes.
type Layers struct {
	// CapHeadOnly keeps a capped result's head only (an error at the
	// end is lost); otherwise the head and the tail are kept.
	CapHeadOnly bool
	// InTurn is when old tool results are stripped inside a turn.
	InTurn StripWhen
	// StripAtTurnEnd strips every old tool result when the user's turn
	// ends.
	StripAtTurnEnd bool
	// Refine adds the shipped refinements to a strip: tool inputs whose
	// files hold them now are stubbed, repeated feedback is folded and
	// (with Config.TrimText) old text is trimmed.
	Refine bool
	// StubMinSaving is the least share of a result its stub must save;
	// 0 takes any saving.
	StubMinSaving float64
	// Volatile tells the provider which trailing messages the in-turn
	// strip will rewrite (llm.Request.Volatile).
	Volatile bool
	// Drop is how the drop layer fits a count over the budget.
	Drop DropMode
	// NoCompact never compacts.
	NoCompact bool
	// AppendOnly makes every edit remove the reasoning it invalidates
	// (Edit.Unthink) and close the open tool round (Edit.Close).
	AppendOnly bool
	// InTurnWhenPays lets a StripAtStart strategy strip inside a turn
	// too, whenever the strip pays for the cache it rewrites
	// (Config.RewriteCost).
	InTurnWhenPays bool
}

// StripWhen is when old tool results are stripped inside a turn.
type StripWhen int

const (
	StripNever     StripWhen = iota
	StripEveryStep           // before every request
	StripBatched             // once a strip saves Config.StripBatch tokens
	StripAtStart             // at the start of a user turn, after a drop
)

// DropMode is how the drop layer fits.
type DropMode int

const (
	DropNone      DropMode = iota
	DropJustUnder          // just under the budget, at every step over it
	DropBatched            // halfway between CompactTo and CompactAt, and only when a drop gets there or the request would not fit
)

// Strategy names.
const (
	StrategyHarness = "harness"
	StrategyAppend  = "append"
)

type shipped struct {
	name   string
	layers Layers
}

func (s shipped) Name() string   { return s.name }
func (s shipped) Layers() Layers { return s.layers }

var (
	// Harness is the shipped strategy: head and tail capped, in-turn
	// strip in batches (Config.StripBatch), strip at turn end, batched
	// drop.
	Harness Strategy = shipped{StrategyHarness, Layers{
		InTurn: StripBatched, StripAtTurnEnd: true, Refine: true,
		StubMinSaving: stubMinSaving, Volatile: true, Drop: DropBatched,
	}}
	// Append is the contract for preserved-thinking models and DeepSeek:
	// every edit removes the reasoning of the messages after it, whose
	// prefix it changed (the docs' remedy), so no thinking block ever
	// fails the prefix check, and inside a turn it also closes the open
	// tool round (Edit.Close), so the latest assistant message needs no
	// thinking. Old output is stripped at a turn's start and, inside a
	// turn, whenever a strip pays for the cache it rewrites (stripPays);
	// drop and compaction act when the count is over the budget. The
	// rolling cache breakpoint stays off output about to be stripped
	// (Volatile).
	Append Strategy = shipped{StrategyAppend, Layers{
		InTurn: StripAtStart, Refine: true, Drop: DropBatched, AppendOnly: true,
		InTurnWhenPays: true, StubMinSaving: stubMinSaving, Volatile: true,
	}}
)

// stubMinSaving is the least share of a result its stub must save under
// the harness strategy (issue 19: 30–50% costs nothing and shows more).
const stubMinSaving = 0.4
