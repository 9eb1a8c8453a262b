package ui

import (
	"fmt"
	"strings"
)

// Breakdown is what the context holds, in tokens, by kind.
type Breakdown struct {
	System     int // system prompt
	Tools      int // tool definitions
	Messages   int // user and assistant text, tool calls
	ToolOutput int // tool results
	Window     int // the model's context window
	// CompactAt is the fraction of Window at which compaction starts (0.85);
	// 0 hides the mark.
	CompactAt float64
	// Measured is true when the total comes from the provider's usage,
	// false when it is an estimate.
	Measured bool
}

// Total is the sum of the kinds.
func (b Breakdown) Total() int { return b.System + b.Tools + b.Messages + b.ToolOutput }

// RenderContext draws the /context view: one bar per kind on the scale of
// the window, then the free space.
func RenderContext(st Style, b Breakdown, width int) string {
	var out strings.Builder
	total := b.Total()
	how := "estimated"
	if b.Measured {
		how = "measured"
	}
	if b.Window > 0 {
		fmt.Fprintf(&out, "%s  %s / %s tokens (%.0f%%, %s)\n", st.Bold("context"), Tokens(total), Tokens(b.Window),
			100*float64(total)/float64(b.Window), how)
	} else {
		fmt.Fprintf(&out, "%s  %s tokens (%s; window unknown)\n", st.Bold("context"), Tokens(total), how)
	}
	scale := max(b.Window, total, 1)
	barw := min(40, max(10, width-32))
	rows := []struct {
		name   string
		n      int
		colour func(string) string
	}{
		{"system", b.System, st.Magenta},
		{"tools", b.Tools, st.Blue},
		{"messages", b.Messages, st.Cyan},
		{"tool output", b.ToolOutput, st.Yellow},
	}
	for _, r := range rows {
		cells := int(float64(r.n) / float64(scale) * float64(barw))
		if r.n > 0 && cells == 0 {
			cells = 1
		}
		bar := r.colour(strings.Repeat("█", cells)) + st.Dim(strings.Repeat("░", barw-cells))
		fmt.Fprintf(&out, "  %-11s %s %7s %5.1f%%\n", r.name, bar, Tokens(r.n), 100*float64(r.n)/float64(scale))
	}
	if b.Window > 0 {
		free := max(0, b.Window-total)
		fmt.Fprintf(&out, "  %-11s %s %7s %5.1f%%\n", "free", strings.Repeat(" ", barw), Tokens(free), 100*float64(free)/float64(b.Window))
		if b.CompactAt > 0 {
			at := int(b.CompactAt * float64(b.Window))
			fmt.Fprintf(&out, "  %s\n", st.Dim(fmt.Sprintf("compaction starts at %s (%.0f%%); /compact runs it now", Tokens(at), 100*b.CompactAt)))
		}
	}
	return out.String()
}
