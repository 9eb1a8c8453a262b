package compact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// What harness itself keeps across every compaction, not left to the
// model's note: the user's requests verbatim (quoteUser, in Write), the
// todo list, the files touched, the decisions of earlier notes, and the
// list of the tool results this compaction removed with where each can be
// read back.

// keptOpen and keptClose delimit harness's own part of a summary block.
const (
	keptOpen  = "<kept_by_harness>\n"
	keptClose = "</kept_by_harness>"
)

// Section heads inside keptOpen … keptClose.
const (
	headTodos     = "Todo list when this note was written:\n"
	headFiles     = "Files touched so far (from the tool calls, kept by harness):\n"
	headDecisions = "Decisions and findings of earlier notes (carried verbatim by harness):\n"
	headDropped   = "Tool results removed by this compaction"
)

// maxListed bounds the removed results the summary names.
const maxListed = 30

// maxDecisions bounds the carried decisions, in characters: the newest
// are kept.
const maxDecisions = 6000

// Kept is what the caller knows that the history does not.
type Kept struct {
	// Todos is the rendered todo list ("" when none).
	Todos string
	// SpillDir is where removed results are written to be read back
	// (the history's spill directory: readable inside the sandbox); ""
	// writes none.
	SpillDir string
	// Original returns a tool result's content as first stored (the
	// session log's), for one a context layer already cut; nil or ""
	// when unknown.
	Original func(toolUseID string) string
}

// Dropped is what one compaction took out of the history, as logged
// (sessionlog.TypeDropped) and shown by /context.
type Dropped struct {
	// Messages is how many stored messages the summary replaced, Chars
	// and Tokens their size (tokens estimated).
	Messages    int             `json:"messages"`
	Chars       int             `json:"chars"`
	Tokens      int             `json:"tokens"`
	ToolResults []DroppedResult `json:"tool_results,omitempty"`
	// Summary is the size of the summary block that replaced them.
	SummaryChars int `json:"summary_chars"`
}

// DroppedResult is one tool result a compaction removed.
type DroppedResult struct {
	ID    string `json:"id"`
	Tool  string `json:"tool"`
	Input string `json:"input,omitempty"` // the call's main argument, one line
	// Chars is its size as last sent; Original its size before any
	// context layer cut it (0: not cut).
	Chars    int `json:"chars"`
	Original int `json:"original_chars,omitempty"`
	Tokens   int `json:"tokens"`
	// Path is a file holding the whole result, which the model may read
	// back with read_file ("" when none was written).
	Path string `json:"path,omitempty"`
}

// TaskKept returns block (a summary from Write, for the messages before
// keep of msgs) with harness's own part added, and the report of what the
// summary replaces. Results removed are written to k.SpillDir so they can
// be read back.
func TaskKept(block llm.Block, msgs []llm.Message, keep int, k Kept) (llm.Block, Dropped, error) {
	keep = min(keep, len(msgs))
	var d Dropped
	var prev string // the previous summary, if the replaced part holds one
	calls := map[string]llm.Block{}
	var files []string
	seenFile := map[string]bool{}
	addFile := func(f string) {
		if f != "" && !seenFile[f] {
			seenFile[f] = true
			files = append(files, f)
		}
	}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if i >= keep {
			// Kept verbatim: only the files they touch count.
			for _, c := range m.ToolCalls() {
				for _, f := range touched(c) {
					addFile(f)
				}
			}
			continue
		}
		d.Messages++
		d.Tokens += history.Estimate(m)
		for _, b := range m.Blocks {
			d.Chars += len(b.Text) + len(b.Content) + len(b.Input) + len(b.Thinking)
			switch b.Type {
			case llm.BlockText:
				if b.Layer == history.LayerSummary {
					prev = b.Text
				}
			case llm.BlockToolUse:
				calls[b.ID] = b
				for _, f := range touched(b) {
					addFile(f)
				}
			case llm.BlockToolResult:
				r, err := dropResult(b, calls[b.ToolUseID], k)
				if err != nil {
					return block, d, err
				}
				d.ToolResults = append(d.ToolResults, r)
			}
		}
	}
	// Earlier notes' files come first, in their order.
	files = dedupe(append(section(prev, headFiles), files...))
	decisions := append(section(prev, headDecisions), noteSection(prev, "## What happened")...)
	decisions = newest(dedupe(decisions), maxDecisions)

	var sb strings.Builder
	sb.WriteString(keptOpen)
	if t := strings.TrimSpace(k.Todos); t != "" {
		sb.WriteString(headTodos + t + "\n\n")
	}
	if len(files) > 0 {
		sb.WriteString(headFiles)
		for _, f := range files {
			sb.WriteString("- " + f + "\n")
		}
		sb.WriteString("\n")
	}
	if len(decisions) > 0 {
		sb.WriteString(headDecisions)
		for _, l := range decisions {
			sb.WriteString("- " + l + "\n")
		}
		sb.WriteString("\n")
	}
	var kept []DroppedResult // those with a file to read back
	for _, r := range d.ToolResults {
		if r.Path != "" {
			kept = append(kept, r)
		}
	}
	if len(kept) > maxListed {
		kept = kept[len(kept)-maxListed:]
	}
	if len(kept) > 0 {
		fmt.Fprintf(&sb, "%s (%d of %d, the newest; the rest were short): their whole text is in the files named, which read_file can read back (with offset and limit for a long one).", headDropped, len(kept), len(d.ToolResults))
		sb.WriteString("\n")
		for _, r := range kept {
			line := fmt.Sprintf("- %s %s", r.ID, r.Tool)
			if r.Input != "" {
				line += " " + r.Input
			}
			line += fmt.Sprintf(": %d chars", max(r.Chars, r.Original))
			if r.Path != "" {
				line += " → " + r.Path
			}
			sb.WriteString(line + "\n")
		}
	}
	sb.WriteString(keptClose)
	block.Text += "\n" + sb.String()
	d.SummaryChars = len(block.Text)
	return block, d, nil
}

// dropResult reports one removed result and writes its whole text where
// it can be read back.
func dropResult(b, call llm.Block, k Kept) (DroppedResult, error) {
	r := DroppedResult{ID: b.ToolUseID, Tool: call.Name, Chars: len(b.Content), Tokens: history.EstimateText(b.Content), Input: callInput(call)}
	if r.Tool == "" {
		r.Tool = "tool"
	}
	text := b.Content
	if b.Layer != "" && b.Layer != history.LayerCap && k.Original != nil {
		if o := k.Original(b.ToolUseID); o != "" {
			text = o
			r.Original = len(o)
		}
	}
	// A capped result's whole text is in its spill file while the turn
	// lasts (the files are swept at its end): copied to stay.
	if p := spillPath(text, k.SpillDir); p != "" {
		if whole, err := os.ReadFile(p); err == nil {
			text = string(whole)
			r.Original = len(text)
		}
	}
	if k.SpillDir == "" || len(text) < 200 {
		return r, nil
	}
	if err := os.MkdirAll(k.SpillDir, 0o700); err != nil {
		return r, fmt.Errorf("creating the spill directory for removed results: %w", err)
	}
	// One file per call id (unique in a session): the same name every
	// time, so the summary's text does not depend on chance.
	name := filepath.Join(k.SpillDir, "compacted-"+safeName(b.ToolUseID)+".txt")
	if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
		return r, fmt.Errorf("keeping a removed tool result: %w", err)
	}
	r.Path, _ = filepath.Abs(name)
	return r, nil
}

// spillPath finds the spill file a capped result names. (A removed
// result is kept as compacted-*.txt, a name the turn-end sweep of
// spill-*.txt leaves alone; the session's spill directory goes when the
// session closes.)
func spillPath(text, dir string) string {
	if dir == "" {
		return ""
	}
	abs, _ := filepath.Abs(dir)
	re := regexp.MustCompile(regexp.QuoteMeta(abs) + `/spill-[^\s\]\)"']+\.txt`)
	return re.FindString(text)
}

func safeName(id string) string {
	var sb strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			sb.WriteRune(r)
		}
		if sb.Len() >= 40 {
			break
		}
	}
	return sb.String()
}

// touched says which files a call read or changed, as "verb path".
func touched(b llm.Block) []string {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	path, _ := in["path"].(string)
	if path == "" {
		path, _ = in["file_path"].(string)
	}
	switch b.Name {
	case "read_file":
		if path != "" {
			return []string{"read " + path}
		}
	case "write_file":
		if path != "" {
			return []string{"wrote " + path}
		}
	case "edit_file":
		if path != "" {
			return []string{"edited " + path}
		}
	case "bash":
		var out []string
		for _, w := range history.Writes(b.Name, b.Input) {
			out = append(out, "wrote "+w.Path)
		}
		return out
	}
	return nil
}

func callInput(b llm.Block) string {
	var in map[string]any
	if json.Unmarshal(b.Input, &in) != nil {
		return ""
	}
	for _, k := range []string{"command", "path", "pattern", "file_path", "description"} {
		if v, ok := in[k].(string); ok {
			v = strings.Join(strings.Fields(v), " ")
			if len(v) > 80 {
				v = v[:80] + "…"
			}
			return fmt.Sprintf("%q", v)
		}
	}
	return ""
}

// section returns the "- " lines under head in the harness part of a
// summary.
func section(summary, head string) []string {
	i := strings.Index(summary, keptOpen)
	if i < 0 {
		return nil
	}
	part := summary[i:]
	j := strings.Index(part, head)
	if j < 0 {
		return nil
	}
	var out []string
	for _, l := range strings.Split(part[j+len(head):], "\n") {
		if !strings.HasPrefix(l, "- ") {
			break
		}
		out = append(out, strings.TrimPrefix(l, "- "))
	}
	return out
}

// noteSection returns the non-empty lines of a section of the model's
// note (up to the next "## ").
func noteSection(summary, head string) []string {
	note := summary
	if i := strings.Index(note, keptOpen); i >= 0 {
		note = note[:i]
	}
	i := strings.Index(note, head)
	if i < 0 {
		return nil
	}
	rest := note[i+len(head):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.Index(rest, "</summary>"); j >= 0 {
		rest = rest[:j]
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// newest keeps the last lines of xs that fit in limit chars.
func newest(xs []string, limit int) []string {
	n := 0
	for i := len(xs) - 1; i >= 0; i-- {
		n += len(xs[i]) + 3
		if n > limit {
			return xs[i+1:]
		}
	}
	return xs
}

// LastDropped returns the newest report of a session's log entries, and
// whether there is one.
func LastDropped(raw []json.RawMessage) (Dropped, bool) {
	for i := len(raw) - 1; i >= 0; i-- {
		var d Dropped
		if json.Unmarshal(raw[i], &d) == nil {
			return d, true
		}
	}
	return Dropped{}, false
}
