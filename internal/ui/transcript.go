package ui

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// summaryLayer is the Layer of the block holding a compaction's handoff
// summary (history.LayerSummary; ui does not import history).
const summaryLayer = "summary"

// Transcript is what a resumed session shows before the prompt: the
// compaction summary when there is one (shortened), then the last
// exchanges — each prompt, the tool calls made for it, one line each, and
// the reply's text, rendered and cut to a few rows — so the user sees where
// the conversation stands.
func Transcript(st Style, msgs []llm.Message, width, exchanges int) string {
	var starts []int // messages holding a typed prompt
	summary := ""
	for i, m := range msgs {
		for _, b := range m.Blocks {
			if b.Layer == summaryLayer {
				summary = b.Text
			}
		}
		if m.Role == llm.RoleUser && promptText(m) != "" {
			starts = append(starts, i)
		}
	}
	var b strings.Builder
	rule := func(label string) {
		b.WriteString(st.Dim("── "+label+" "+strings.Repeat("─", max(0, min(width, 72)-StringWidth(label)-4))) + "\n")
	}
	if summary != "" {
		rule("summary of the compacted part")
		note := summary
		if i := strings.Index(note, "<summary>"); i >= 0 {
			note = note[i+len("<summary>"):]
		}
		if i := strings.Index(note, "</summary>"); i >= 0 {
			note = note[:i]
		}
		b.WriteString(cutRows(RenderMarkdown(st, strings.TrimSpace(note), width), 12, st))
	}
	if len(starts) == 0 {
		if summary != "" {
			rule("end of the summary")
		}
		return b.String()
	}
	first := 0
	if len(starts) > exchanges {
		first = len(starts) - exchanges
	}
	label := "earlier in this session"
	if first > 0 {
		label = fmt.Sprintf("the last %d of %d exchanges", len(starts)-first, len(starts))
	}
	rule(label)
	for i := starts[first]; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case llm.RoleUser:
			if p := promptText(m); p != "" {
				lines := strings.Split(Sanitize(p), "\n")
				more := ""
				if len(lines) > 3 {
					more = st.Dim(fmt.Sprintf(" … %d more lines", len(lines)-3))
					lines = lines[:3]
				}
				b.WriteString(st.BoldCyan("› ") + Truncate(strings.Join(lines, " ⏎ "), width-4) + more + "\n")
			}
		case llm.RoleAssistant:
			for _, bl := range m.Blocks {
				switch bl.Type {
				case llm.BlockText:
					if t := strings.TrimSpace(bl.Text); t != "" {
						b.WriteString(cutRows(RenderMarkdown(st, t, width), 8, st))
					}
				case llm.BlockToolUse:
					b.WriteString(st.Dim(StripANSI(ToolLine(st, bl, width))) + "\n")
				}
			}
		}
	}
	rule("resumed here")
	return b.String()
}

// promptText is the typed text of a user message (not tool results, not
// the summary).
func promptText(m llm.Message) string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == llm.BlockText && b.Layer != summaryLayer && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// cutRows keeps the first n rows of rendered text, saying how many were
// left out.
func cutRows(s string, n int, st Style) string {
	rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(rows) <= n {
		return strings.Join(rows, "\n") + "\n"
	}
	return strings.Join(rows[:n], "\n") + "\n" + st.Dim(fmt.Sprintf("  … %d more rows", len(rows)-n)) + "\n"
}
