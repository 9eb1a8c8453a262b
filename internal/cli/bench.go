package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/replay"
)

// benchContextOptions are the flags of harness bench context.
type benchContextOptions struct {
	Strategies []string
	Pricing    string
	Window     int
	JSON       bool
	Decompose  bool
	Paths      []string
	// Thinking models preserved thinking: tokens of reasoning per
	// recorded assistant turn, and what happens to old reasoning.
	ThinkingTokens int
	OldThinking    string
	// Cap and TrimText set the shipped strategies' layers (harness,
	// append); raw and seed stay the references.
	Cap      int
	TrimText bool
	// MaxTokens is the reply's reserve a session keeps in the window
	// (history.Config.Reserve): 0 gives the prompt the whole window.
	MaxTokens int
}

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure harness on recorded sessions",
		Long: `Measure harness on recorded sessions. No model is called.

EXIT STATUS
  0  the benchmark ran
  1  a trajectory could not be read or replayed
  2  bad flags or arguments`,
	}
	cmd.AddCommand(newBenchContextCommand())
	return cmd
}

func newBenchContextCommand() *cobra.Command {
	opts := benchContextOptions{}
	cmd := &cobra.Command{
		Use:   "context [flags] PATH...",
		Short: "Replay trajectories through the context layers and a prefix-cache simulator",
		Long: `Replay trajectories through harness's real context layers (cap, strip, drop,
compact, reminder) and an ideal prefix-cache simulator, and print per strategy:
trajectories, requests, tokens sent, cache-read share, input cost relative to
raw (summary calls included), mean visible tool-output chars per request, peak
context, compactions and drops.

With --decompose, also each strategy's cost split by cache tier (cache reads,
cache writes, uncached input, summary calls) and by content (old assistant
text, the latest tool result, the latest assistant message, the task prompt,
old results and their stubs, old tool-call inputs, system+tools+reminder,
other user text, summary calls), and the floor: what the model minimally
needs (system, tools, reminder, task, the last two messages, old results as
300-char stubs, old calls bare), costed through the same cache simulator,
with how much of each strategy's gap above it each content kind holds.

Strategies (--strategy; --policy is its deprecated old name): raw (append-only,
cap only), seed (the reference harness: head-only cap, strip after every tool
round, drop to just under the budget, compaction with its own system prompt),
harness (what ships for most models), append (the append-only contract of
preserved-thinking models and DeepSeek: edits at a turn's start and, inside a
turn, when they pay for the cache they rewrite, each removing the reasoning
after it and closing the open round, and the reminder persisted as deltas
instead of sent whole every request), server (the same contract with the edits left to
Anthropic's context management: the client never strips or drops; old tool
results are cleared server-side, clear_tool_uses_20250919 with its trigger at
half the window, clear_at_least a fifth of it, keep 3; the summary stands for
server-side compaction; its batches count as drops).

--max-tokens N keeps N tokens of the window free for the reply (at most half
of it), as a session keeps MAX_TOKENS, because Anthropic with thinking on and
DeepSeek count max_tokens against the window: every strategy keeps its prompt
under the rest (the server strategy's clearing trigger stays at half the
window). 0, the default, gives the prompt the whole window.

--thinking-tokens N models preserved thinking, which recorded trajectories
lack: a reasoning block of N tokens heads every recorded assistant turn;
--old-thinking keep sends them all back, clear removes earlier turns' at each
turn's start (what clear_thinking with keep 1 does server-side: the same
prompt, so the same cost here).

A PATH is a mini-swe-agent *.traj.json(.gz) file, a harness session log
(*.jsonl), or a directory holding them. No model is called: the recorded
replies are reused, and a compaction's summary is a fixed-size note
synthesised from the history, costed as a real call (input and output).

EXIT STATUS
  0  the benchmark ran
  1  a trajectory could not be read or replayed
  2  bad flags or arguments`,
		Example: `  harness bench context ../shared/data/trajectories/mini-swe-agent
  harness bench context --pricing openai --window 32000 --json trajs/
  harness bench context --decompose ../shared/data/trajectories/mini-swe-agent`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if cmd.Flags().Changed("policy") {
				fmt.Fprintln(cmd.ErrOrStderr(), "harness: --policy is deprecated: use --strategy")
			}
			return runBenchContext(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	stringSliceVar(f, &opts.Strategies, "strategy", replay.Strategies, "strategies to replay, comma-separated: "+strings.Join(replay.Strategies, ", "))
	// --policy was the flag's first name; "policy" now means the sandbox's
	// rules only. Kept as a hidden alias (same variable) so old scripts
	// still run. Not MarkDeprecated: cobra prints that notice with
	// cmd.Print, to stdout once SetOut is set, into --json output.
	stringSliceVar(f, &opts.Strategies, "policy", replay.Strategies, "deprecated: use --strategy")
	_ = f.MarkHidden("policy")
	f.StringVar(&opts.Pricing, "pricing", replay.Anthropic, "cache semantics and prices: anthropic or openai")
	f.IntVar(&opts.Window, "window", history.DefaultWindow, "context window in tokens")
	f.BoolVar(&opts.JSON, "json", false, "print one JSON object")
	f.BoolVar(&opts.Decompose, "decompose", false, "also split each strategy's cost by cache tier and by content, and cost the floor")
	f.IntVar(&opts.Cap, "cap", history.DefaultCap, "harness and append strategies: chars of a tool result kept inline (CAP); raw and seed keep the reference's 10000")
	f.BoolVar(&opts.TrimText, "trim-old-text", false, "harness and append strategies: cut old assistant text over 900 chars to about 500 (TRIM_OLD_TEXT)")
	f.IntVar(&opts.MaxTokens, "max-tokens", 0, "tokens of the window kept free for the reply (MAX_TOKENS; at most half the window); 0 gives the prompt the whole window")
	f.IntVar(&opts.ThinkingTokens, "thinking-tokens", 0, "model preserved thinking: a reasoning block of this many tokens heads every recorded assistant turn")
	f.StringVar(&opts.OldThinking, "old-thinking", replay.ThinkingKeep, "with --thinking-tokens: keep (sent back, billed as input) or clear (earlier turns' reasoning removed at each turn's start, client- or server-side)")
	return cmd
}

func validateBenchContext(opts benchContextOptions) error {
	if len(opts.Paths) == 0 {
		return usageError("bench context: no PATH given: pass trajectory files or directories")
	}
	if opts.Pricing != replay.Anthropic && opts.Pricing != replay.OpenAI {
		return usageError("bench context: unknown --pricing %q: use anthropic or openai", opts.Pricing)
	}
	if opts.Window < 4096 {
		return usageError("bench context: --window %d is too small: use at least 4096 tokens", opts.Window)
	}
	if opts.Cap < 1000 {
		return usageError("bench context: --cap %d is too small: use at least 1000 chars", opts.Cap)
	}
	if opts.MaxTokens < 0 {
		return usageError("bench context: --max-tokens %d must not be negative", opts.MaxTokens)
	}
	if opts.ThinkingTokens < 0 {
		return usageError("bench context: --thinking-tokens %d must not be negative", opts.ThinkingTokens)
	}
	if opts.OldThinking != replay.ThinkingKeep && opts.OldThinking != replay.ThinkingClear {
		return usageError("bench context: unknown --old-thinking %q: use keep or clear", opts.OldThinking)
	}
	if len(opts.Strategies) == 0 {
		return usageError("bench context: --strategy is empty: use one or more of %s", strings.Join(replay.Strategies, ", "))
	}
	for _, p := range opts.Strategies {
		if !slices.Contains(replay.Strategies, p) {
			return usageError("bench context: unknown strategy %q: use %s", p, strings.Join(replay.Strategies, ", "))
		}
	}
	return nil
}

func runBenchContext(ctx context.Context, opts benchContextOptions, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := validateBenchContext(opts); err != nil {
		return err
	}
	trajs, err := replay.Load(opts.Paths)
	if err != nil {
		return fmt.Errorf("bench context: %w", err)
	}
	results, err := replay.RunAll(ctx, trajs, opts.Strategies, replay.Options{Pricing: opts.Pricing, Window: opts.Window, Decompose: opts.Decompose,
		Config:         history.Config{Cap: opts.Cap, TrimText: opts.TrimText, Reserve: opts.MaxTokens},
		ThinkingTokens: opts.ThinkingTokens, OldThinking: opts.OldThinking})
	if err != nil {
		return fmt.Errorf("bench context: %w", err)
	}
	var floor *replay.Decomposition
	if opts.Decompose {
		if floor, err = replay.Floor(ctx, trajs, opts.Pricing); err != nil {
			return fmt.Errorf("bench context: %w", err)
		}
	}
	if opts.JSON {
		var dec *decomposeReport
		if floor != nil {
			dec = &decomposeReport{Floor: floor, FloorRatio: share(floor.Total, rawCost(results))}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Pricing        string           `json:"pricing"`
			Window         int              `json:"window"`
			MaxTokens      int              `json:"max_tokens,omitempty"`
			ThinkingTokens int              `json:"thinking_tokens,omitempty"`
			OldThinking    string           `json:"old_thinking,omitempty"`
			Strategies     []replay.Result  `json:"policies"` // the key predates the name; consumers read it
			Decompose      *decomposeReport `json:"decompose,omitempty"`
		}{opts.Pricing, opts.Window, opts.MaxTokens, opts.ThinkingTokens, thinkingLabel(opts), results, dec})
	}
	fmt.Fprintf(stdout, "pricing %s, window %d, %d trajectories (summaries synthesised: no model is called)\n", opts.Pricing, opts.Window, len(trajs))
	if opts.MaxTokens > 0 {
		fmt.Fprintf(stdout, "reply reserve: %d tokens of the window (--max-tokens %d, at most half the window)\n", min(opts.MaxTokens, opts.Window/2), opts.MaxTokens)
	}
	if opts.ThinkingTokens > 0 {
		fmt.Fprintf(stdout, "modelled thinking: %d tokens per assistant turn, old thinking %s\n", opts.ThinkingTokens, opts.OldThinking)
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\ttrajectories\trequests\ttokens sent\tcache read\tcost vs raw\tvisible output\tpeak context\tcompactions\tdrops\treminder/req\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f%%\t%+.1f%%\t%.0f\t%d\t%d\t%d\t%.1f\t\n", r.Strategy, r.Trajectories, r.Requests, r.TokensSent,
			100*r.CacheReadShare, 100*(r.CostRatio-1), r.VisibleOutputChars, r.PeakContext, r.Compactions, r.Drops, r.ReminderTokens)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\ncost: input, cache reads and writes of every request plus summary calls (input and output);")
	fmt.Fprintln(stdout, "visible output: tool-result chars per request; tokens counted at "+strings.TrimRight(fmt.Sprintf("%.2f", replay.CharsPerToken), "0")+" chars a token.")
	if floor != nil {
		return printDecomposition(stdout, results, floor)
	}
	return nil
}

func thinkingLabel(o benchContextOptions) string {
	if o.ThinkingTokens == 0 {
		return ""
	}
	return o.OldThinking
}
