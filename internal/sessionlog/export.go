package sessionlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// WriteJSONL writes the entries one JSON object a line: the log as it is
// on disk (already redacted), minus a torn last line.
func WriteJSONL(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("writing the session: %w", err)
		}
	}
	return bw.Flush()
}

// MarkdownOptions shape WriteMarkdown's output.
type MarkdownOptions struct {
	// MaxResultLines cuts each tool result and tool input to that many
	// lines; 0 keeps them whole.
	MaxResultLines int
	// Usage, when set, is printed in the header ("12.3k tokens, $0.04").
	Usage string
}

// WriteMarkdown renders a session as Markdown: a header, then every message
// in order (sub-agents' marked with their label), tool calls and results
// in fenced blocks, and history edits, permission decisions, plans and
// notices as quoted lines.
func WriteMarkdown(w io.Writer, entries []Entry, o MarkdownOptions) error {
	bw := bufio.NewWriter(w)
	s := Summarize("", entries)
	t := s.Title
	if t == "" {
		t = "(no messages)"
	}
	fmt.Fprintf(bw, "# %s\n\n", t)
	fmt.Fprintf(bw, "- Session: `%s`\n", s.ID)
	if s.Project != "" {
		fmt.Fprintf(bw, "- Project: `%s`\n", s.Project)
	}
	if s.Model != "" {
		fmt.Fprintf(bw, "- Model: %s (%s)\n", s.Model, s.Provider)
	}
	if !s.Start.IsZero() {
		fmt.Fprintf(bw, "- Started: %s, last entry %s\n", s.Start.UTC().Format("2006-01-02 15:04:05 UTC"), s.Updated.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintf(bw, "- Steps: %d\n", s.Steps)
	if o.Usage != "" {
		fmt.Fprintf(bw, "- Usage: %s\n", o.Usage)
	}
	names := map[string]string{} // tool_use id -> tool name
	for _, e := range entries {
		switch e.Type {
		case TypeMessage:
			if e.Message != nil {
				writeMessage(bw, *e.Message, e.Agent, names, o)
			}
		case TypeEdit:
			var ed struct {
				Layer   string            `json:"layer"`
				Blocks  []json.RawMessage `json:"blocks"`
				Summary *llm.Block        `json:"summary"`
			}
			_ = json.Unmarshal(e.Edit, &ed)
			if ed.Summary != nil {
				// A compaction: its summary is what the model went on from.
				fmt.Fprintf(bw, "\n> %scontext: compacted; the earlier messages were replaced by this summary:\n>\n", who(e.Agent))
				for _, l := range strings.Split(strings.TrimRight(ed.Summary.Text, "\n"), "\n") {
					fmt.Fprintf(bw, "> %s\n", l)
				}
				continue
			}
			fmt.Fprintf(bw, "\n> %scontext: %s edit (%d blocks)\n", who(e.Agent), ed.Layer, len(ed.Blocks))
		case TypePermission:
			if p := e.Permission; p != nil {
				what := p.Command
				if what == "" {
					what = p.Path
				}
				fmt.Fprintf(bw, "\n> permission: %s `%s` → %s (%s)\n", p.Tool, oneLine(what), p.Answer, p.Rule)
			}
		case TypeTodos:
			var items []struct{ Content, Status string }
			_ = json.Unmarshal(e.Todos, &items)
			fmt.Fprintf(bw, "\n> plan:\n")
			if len(items) == 0 {
				fmt.Fprintf(bw, "> (empty)\n")
			}
			for _, it := range items {
				mark := " "
				switch it.Status {
				case "completed":
					mark = "x"
				case "in_progress":
					mark = ">"
				}
				fmt.Fprintf(bw, "> - [%s] %s\n", mark, it.Content)
			}
		case TypeNotice:
			fmt.Fprintf(bw, "\n> %snotice: %s\n", who(e.Agent), oneLine(e.Text))
		case TypeDropped:
			// What the compaction that follows removed (package compact's
			// Dropped), and where each removed result was kept.
			var d struct {
				Messages int `json:"messages"`
				Tokens   int `json:"tokens"`
				Results  []struct {
					Tool     string `json:"tool"`
					Input    string `json:"input"`
					Chars    int    `json:"chars"`
					Original int    `json:"original_chars"`
					Path     string `json:"path"`
				} `json:"tool_results"`
			}
			_ = json.Unmarshal(e.Dropped, &d)
			fmt.Fprintf(bw, "\n> %scontext: the compaction below removes %d messages (about %d tokens) and %d tool results\n", who(e.Agent), d.Messages, d.Tokens, len(d.Results))
			for _, r := range d.Results {
				where := ""
				if r.Path != "" {
					where = " → `" + r.Path + "`"
				}
				fmt.Fprintf(bw, "> - %s %s: %d chars%s\n", r.Tool, oneLine(r.Input), max(r.Chars, r.Original), where)
			}
		}
	}
	return bw.Flush()
}

func who(label string) string {
	if label == "" {
		return ""
	}
	return label + " "
}

func writeMessage(w io.Writer, m llm.Message, label string, names map[string]string, o MarkdownOptions) {
	role := "User"
	if m.Role == llm.RoleAssistant {
		role = "Assistant"
	}
	if len(m.Blocks) > 0 && m.Blocks[0].Type == llm.BlockToolResult {
		role = "Tool results"
	}
	if label != "" {
		role += " (sub-agent " + label + ")"
	}
	fmt.Fprintf(w, "\n## %s\n", role)
	for _, b := range m.Blocks {
		switch b.Type {
		case llm.BlockText:
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(b.Text, "\n"))
		case llm.BlockThinking:
			fmt.Fprintf(w, "\n<details><summary>thinking</summary>\n\n%s\n\n</details>\n", strings.TrimRight(b.Thinking, "\n"))
		case llm.BlockToolUse:
			names[b.ID] = b.Name
			fmt.Fprintf(w, "\n**→ %s** `%s`\n\n", b.Name, b.ID)
			fence(w, "json", clipLines(string(b.Input), o.MaxResultLines))
		case llm.BlockToolResult:
			status := ""
			if b.IsError {
				status = " (error)"
			}
			name := names[b.ToolUseID]
			if name == "" {
				name = "result"
			}
			fmt.Fprintf(w, "\n**← %s%s** `%s`\n\n", name, status, b.ToolUseID)
			fence(w, "", clipLines(b.Content, o.MaxResultLines))
		}
	}
}

// fence writes text in a code fence longer than any backtick run inside it.
func fence(w io.Writer, lang, text string) {
	n, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	fmt.Fprintf(w, "%s%s\n%s\n%s\n", f, lang, strings.TrimRight(text, "\n"), f)
}

func clipLines(s string, n int) string {
	if n <= 0 {
		return s
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… [%d more lines; harness sessions export shows everything]", len(lines)-n)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
