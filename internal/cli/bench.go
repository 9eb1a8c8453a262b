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
compact, reminder) and an ideal prefix-cache simulator, and print per policy:
trajectories, requests, tokens sent, cache-read share, input cost relative to
raw (summary calls included), mean visible tool-output chars per request, peak
context, compactions and drops.

With --decompose, also each policy's cost split by cache tier (cache reads,
cache writes, uncached input, summary calls) and by content (old assistant
text, the latest tool result, the latest assistant message, the task prompt,
old results and their stubs, old tool-call inputs, system+tools+reminder,
other user text, summary calls), and the floor: what the model minimally
needs (system, tools, reminder, task, the last two messages, old results as
300-char stubs, old calls bare), costed through the same cache simulator,
with how much of each policy's gap above it each content kind holds.

Policies: raw (append-only, cap only), seed (the reference harness: head-only
cap, strip after every tool round, drop to just under the budget, compaction
with its own system prompt), harness (what ships).

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
			return runBenchContext(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.Strategies, "policy", replay.Strategies, "policies to replay, comma-separated: raw, seed, harness")
	f.StringVar(&opts.Pricing, "pricing", replay.Anthropic, "cache semantics and prices: anthropic or openai")
	f.IntVar(&opts.Window, "window", history.DefaultWindow, "context window in tokens")
	f.BoolVar(&opts.JSON, "json", false, "print one JSON object")
	f.BoolVar(&opts.Decompose, "decompose", false, "also split each policy's cost by cache tier and by content, and cost the floor")
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
	if len(opts.Strategies) == 0 {
		return usageError("bench context: --policy is empty: use raw, seed and/or harness")
	}
	for _, p := range opts.Strategies {
		if !slices.Contains(replay.Strategies, p) {
			return usageError("bench context: unknown policy %q: use raw, seed or harness", p)
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
	results, err := replay.RunAll(ctx, trajs, opts.Strategies, replay.Options{Pricing: opts.Pricing, Window: opts.Window, Decompose: opts.Decompose})
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
			Pricing    string           `json:"pricing"`
			Window     int              `json:"window"`
			Strategies []replay.Result  `json:"policies"`
			Decompose  *decomposeReport `json:"decompose,omitempty"`
		}{opts.Pricing, opts.Window, results, dec})
	}
	fmt.Fprintf(stdout, "pricing %s, window %d, %d trajectories (summaries synthesised: no model is called)\n\n", opts.Pricing, opts.Window, len(trajs))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\ttrajectories\trequests\ttokens sent\tcache read\tcost vs raw\tvisible output\tpeak context\tcompactions\tdrops\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f%%\t%+.1f%%\t%.0f\t%d\t%d\t%d\t\n", r.Strategy, r.Trajectories, r.Requests, r.TokensSent,
			100*r.CacheReadShare, 100*(r.CostRatio-1), r.VisibleOutputChars, r.PeakContext, r.Compactions, r.Drops)
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
