package ui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// How a tool call and its result read: one line for the call, a short
// preview and size for the result, a diff preview for edits.

// toolArgKeys are the input fields that best describe a call, in order.
var toolArgKeys = []string{"command", "pattern", "path", "file_path", "query", "url", "description", "prompt", "name"}

// ToolLine is the one-line form of a call: "⚙ bash  go test ./...".
func ToolLine(st Style, call llm.Block, width int) string {
	name := Sanitize(call.Name)
	arg := toolArg(call)
	room := width - StringWidth(name) - 4
	arg = Truncate(arg, max(room, 10))
	if call.Name == "bash" {
		arg = Highlight(st, "sh", arg)
	} else {
		arg = st.Cyan(arg)
	}
	return st.Magenta("⚙ ") + st.Bold(name) + "  " + arg
}

func toolArg(call llm.Block) string {
	var m map[string]any
	if json.Unmarshal(call.Input, &m) != nil {
		return oneLine(Sanitize(string(call.Input)))
	}
	for _, k := range toolArgKeys {
		if v, ok := m[k].(string); ok && v != "" {
			s := v
			if k == "pattern" {
				if p, ok := m["path"].(string); ok && p != "" {
					s += "  in " + p
				}
			}
			return oneLine(Sanitize(s))
		}
	}
	if items, ok := m["todos"].([]any); ok {
		return fmt.Sprintf("%d items", len(items))
	}
	if len(m) == 0 {
		return ""
	}
	return oneLine(Sanitize(string(call.Input)))
}

// oneLine joins a multi-line argument with " ⏎ " so it fits one row.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var (
	exitRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[exit code: (-?\d+)\]\s*$`) })
	markerRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\[(output limit|timed out|WARNING|harness[: ]|the user interrupted|lines \d+-\d+ of \d+;|\d+ more matches|a .* appeared;)`)
	})
	capRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\[harness cap: \d+ of \d+ chars cut here \(lines (\d+)-(\d+) of (\d+)\)`)
	})
	rangeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\[lines (\d+)-(\d+) of (\d+);`) })
	limitRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\[output limit reached: (\d+) bytes from the middle`)
	})
)

// resultPreviewLines is how many lines of output are shown under a call.
const resultPreviewLines = 3

// ToolResult is the short form of a result, one to five lines under the
// call: status (exit code, error), the first lines, and how much was cut.
func ToolResult(st Style, call, result llm.Block, elapsed time.Duration, width int) string {
	content := Sanitize(result.Content)
	var status string
	body := content
	if m := exitRe().FindStringSubmatchIndex(content); m != nil {
		code := content[m[2]:m[3]]
		body = strings.TrimRight(content[:m[0]], "\n")
		if code == "0" {
			status = st.Green("exit 0")
		} else {
			status = st.Red("exit " + code)
		}
	} else if result.IsError {
		status = st.Red("error")
	} else {
		status = st.Green("ok")
	}
	var lines, notes []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if markerRe().MatchString(l) {
			notes = append(notes, l)
			continue
		}
		lines = append(lines, l)
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	meta := append([]string{status}, resultSize(st, call, content, lines)...)
	meta = append(meta, formatElapsed(elapsed))
	var b strings.Builder
	b.WriteString("  " + st.Dim("↳ ") + strings.Join(meta, st.Dim(" · ")) + "\n")
	shown := lines
	if len(shown) > resultPreviewLines {
		shown = shown[:resultPreviewLines]
	}
	if result.IsError && len(lines) > 0 && call.Name != "bash" {
		// A failed file tool's message is its whole point: show it in red.
		b.WriteString("    " + st.Red(Truncate(lines[0], width-4)) + "\n")
		shown = shown[1:]
	}
	if call.Name == "edit_file" && !result.IsError {
		b.WriteString(editPreview(st, call, width))
	}
	for _, l := range shown {
		b.WriteString("    " + st.Dim(Truncate(l, width-4)) + "\n")
	}
	if more := len(lines) - resultPreviewLines; more > 0 {
		b.WriteString("    " + st.Dim(fmt.Sprintf("… %d more %s (/expand)", more, strings.TrimPrefix(plural(more, "line"), fmt.Sprint(more)+" "))) + "\n")
	}
	for _, n := range notes {
		b.WriteString("    " + st.Yellow(Truncate(n, width-4)) + "\n")
	}
	return b.String()
}

// resultSize is the size part of a result's summary, counted as the tool
// saw it, not as the capped text shows it: a capped output's marker gives
// its whole line count (the exit-code line and the harness's own notes in
// its tail are not output); a read of part of a file says "188 of 300
// lines"; output the sandbox dropped (from the middle: it keeps the start
// and the end) is named in bytes, since its lines
// were never seen. A one-line answer of a file tool has no size.
func resultSize(st Style, call llm.Block, content string, lines []string) []string {
	var out []string
	n := len(lines)
	cut := 0
	if m := capRe().FindStringSubmatchIndex(content); m != nil {
		a, _ := strconv.Atoi(content[m[2]:m[3]])
		b, _ := strconv.Atoi(content[m[4]:m[5]])
		total, _ := strconv.Atoi(content[m[6]:m[7]])
		cut = max(0, b-a)
		// The marker counts the original text's lines, a line after its
		// last newline included: take off that empty line and the lines
		// after the cut (all in the tail) that are not output.
		tail := content[m[1]:]
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:] // the rest of the marker's line
		}
		if strings.HasSuffix(tail, "\n") {
			total--
		}
		for _, l := range strings.Split(tail, "\n") {
			if markerRe().MatchString(l) || exitRe().MatchString(l) {
				total--
			}
		}
		n = max(total, 0)
	}
	switch m := rangeRe().FindStringSubmatch(content); {
	case m != nil:
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		out = append(out, fmt.Sprintf("%d of %s", b-a+1, plural(atoi(m[3]), "line")))
	case n == 1 && call.Name != "bash":
	case n > 0:
		out = append(out, plural(n, "line"))
	}
	if cut > 0 {
		out = append(out, st.Yellow(fmt.Sprintf("%d cut in the middle", cut)))
	}
	if m := limitRe().FindStringSubmatch(content); m != nil {
		out = append(out, st.Yellow(formatBytes(atoi(m[1]))+" dropped in the middle"))
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// formatBytes is a byte count for people: 512 B, 3.4 kB, 12 MB.
func formatBytes(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// editPreview shows an edit as a few removed and added lines: the lines
// the minimal diff of old_string and new_string changes (the context a
// model repeats in both is left out).
func editPreview(st Style, call llm.Block, width int) string {
	var in struct {
		Old string `json:"old_string"`
		New string `json:"new_string"`
	}
	if json.Unmarshal(call.Input, &in) != nil {
		return ""
	}
	var b strings.Builder
	side := func(lines []string, mark string, colour func(string) string) {
		for i, l := range lines {
			if i == resultPreviewLines {
				b.WriteString("    " + st.Dim(fmt.Sprintf("  … %d more", len(lines)-i)) + "\n")
				break
			}
			b.WriteString("    " + colour(Truncate(mark+" "+l, width-4)) + "\n")
		}
	}
	removed, added := changedLines(Sanitize(in.Old), Sanitize(in.New))
	side(removed, "-", st.Red)
	side(added, "+", st.Green)
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
