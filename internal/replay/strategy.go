package replay

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/history"
)

// The benchmark's reference strategies. They live here, beside the
// replay that measures them, and reach history only through its Strategy
// interface: production history has no branch for them.
const (
	StrategySeed = "seed" // the reference harness: head-only cap, strip every round, drop to just under
	StrategyRaw  = "raw"  // cap and nothing else, never edits
	// StrategyServer is the append-only contract with the edits left to
	// the provider: Anthropic's context editing clears old tool results
	// server-side (clear_tool_uses_20250919), and the summary is
	// server-side compaction, which the prefix check accepts; the client
	// never strips or drops. It exists only in the benchmark (see
	// serverClearing): history runs it as Append.
	StrategyServer = "server"
)

// reference is a strategy modelling another harness: it keeps the
// reference's cap and no text trim whatever the shipped configuration
// says, and (ownSummariser) pays for a summariser with a system prompt
// of its own.
type reference struct {
	name          string
	layers        history.Layers
	ownSummariser bool
}

func (r reference) Name() string           { return r.name }
func (r reference) Layers() history.Layers { return r.layers }

var (
	// Seed is the reference harness.
	Seed history.Strategy = reference{StrategySeed, history.Layers{
		CapHeadOnly: true, InTurn: history.StripEveryStep, StripAtTurnEnd: true, Drop: history.DropJustUnder,
	}, true}
	// Raw is the cap alone: nothing is ever edited.
	Raw history.Strategy = reference{name: StrategyRaw, layers: history.Layers{NoCompact: true}}
)

// Strategies the benchmark knows, in report order.
var Strategies = []string{StrategyRaw, StrategySeed, history.StrategyHarness, history.StrategyAppend, StrategyServer}

var byName = map[string]history.Strategy{
	StrategyRaw: Raw, StrategySeed: Seed, history.StrategyHarness: history.Harness, history.StrategyAppend: history.Append,
	StrategyServer: history.Append,
}

// StrategyNamed returns the strategy of that name.
func StrategyNamed(name string) (history.Strategy, error) {
	if s, ok := byName[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown strategy %q: want one of %s", name, strings.Join(Strategies, ", "))
}
