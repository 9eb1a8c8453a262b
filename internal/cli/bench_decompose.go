package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/harness-dev/harness/internal/replay"
)

// decomposeReport is the --decompose part of harness bench context's JSON.
type decomposeReport struct {
	Floor      *replay.Decomposition `json:"floor"`
	FloorRatio float64               `json:"floor_cost_ratio"`
}

// rawCost recovers raw's cost from any result: RunAll gives every result's
// cost and its ratio to raw.
func rawCost(results []replay.Result) float64 {
	for _, r := range results {
		if r.CostRatio > 0 {
			return r.Cost / r.CostRatio
		}
	}
	return 0
}

// printDecomposition prints, per strategy, each tier's and each content
// kind's share of that strategy's cost, then the floor against raw and, per
// content kind, how much of each strategy's gap above the floor it holds.
func printDecomposition(w io.Writer, results []replay.Result, floor *replay.Decomposition) error {
	raw := rawCost(results)
	fmt.Fprintln(w, "\ncost decomposition (share of each strategy's cost)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "\t"
	for _, r := range results {
		header += r.Strategy + "\t"
	}
	fmt.Fprintln(tw, header+"floor\t")
	row := func(name string, get func(*replay.Decomposition) float64) {
		line := name + "\t"
		for _, r := range results {
			line += fmt.Sprintf("%.1f%%\t", 100*share(get(r.Decomposition), r.Decomposition.Total))
		}
		fmt.Fprintln(tw, line+fmt.Sprintf("%.1f%%\t", 100*share(get(floor), floor.Total)))
	}
	for _, k := range replay.Tiers {
		row("tier: "+k, func(d *replay.Decomposition) float64 { return d.Tier[k] })
	}
	for _, k := range replay.Contents {
		row("content: "+k, func(d *replay.Decomposition) float64 { return d.Content[k] })
	}
	line := "cost vs raw\t"
	for _, r := range results {
		line += fmt.Sprintf("%.3f\t", share(r.Cost, raw))
	}
	fmt.Fprintln(tw, line+fmt.Sprintf("%.3f\t", share(floor.Total, raw)))
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\ngap above the floor (share of each strategy's cost minus the floor's, by content)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header = "\t"
	for _, r := range results {
		header += r.Strategy + "\t"
	}
	fmt.Fprintln(tw, header)
	for _, k := range replay.Contents {
		line := "content: " + k + "\t"
		for _, r := range results {
			line += fmt.Sprintf("%.1f%%\t", 100*share(r.Decomposition.Content[k]-floor.Content[k], r.Decomposition.Total-floor.Total))
		}
		fmt.Fprintln(tw, line)
	}
	line = "gap vs raw\t"
	for _, r := range results {
		line += fmt.Sprintf("%.3f\t", share(r.Cost-floor.Total, raw))
	}
	fmt.Fprintln(tw, line)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfloor: system, tools, reminder, task, the last two messages, old results as %d-char stubs, old calls bare.\n", replay.FloorStub)
	return nil
}

func share(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
