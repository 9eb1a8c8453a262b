package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Preview is what a call would do, shown inside its permission prompt:
// the diff of an edit, the content of a file to write. Short is what fits
// the prompt box; Full is the whole of it, for the pager; Full is "" when
// Short already shows everything.
type Preview struct {
	Short []string
	Full  []string
}

// previewFileLimit bounds how much of an existing file is read to place an
// edit (line numbers, context).
const previewFileLimit = 4 << 20

// EditPreview shows an edit_file call as the minimal unified diff it makes
// (github.com/aymanbagabas/go-udiff, gopls's diff): each changed place
// with two lines of context, removed lines in red, added in green, line
// numbers, the code highlighted, and in a line changed in place the
// changed words marked. file is the path the gate was asked about (read
// on the host to place the edit; when it cannot be read, or the text is
// not in it, the diff is of the two strings, without line numbers). rows
// bounds Short: the context shrinks before the changed lines are cut.
func EditPreview(st Style, file string, input json.RawMessage, width, rows int) Preview {
	var in struct {
		Old        string `json:"old_string"`
		New        string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if json.Unmarshal(input, &in) != nil {
		return Preview{}
	}
	before, after := Sanitize(in.Old), Sanitize(in.New)
	numbered, places := false, 0
	if text := readForPreview(file); text != "" && in.Old != "" {
		if places = strings.Count(text, in.Old); places > 0 {
			n := -1
			if !in.ReplaceAll {
				places, n = 1, 1
			}
			before, after = Sanitize(text), Sanitize(strings.Replace(text, in.Old, in.New, n))
			numbered = true
		}
	}
	d := newDiffView(st, file, before, after, numbered, width)
	head := fmt.Sprintf("-%d +%d lines", d.removed, d.added)
	if places > 1 {
		head += fmt.Sprintf(", %d places", places)
	}
	return d.fit(st.Dim(head), rows)
}

// readForPreview is the file's text, or "" when it is not a regular file
// small enough to read.
func readForPreview(file string) string {
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > previewFileLimit {
		return ""
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	return string(b)
}

// WritePreview shows a write_file call: whether it creates or replaces
// the file, its size, and then, for a new file, the content's head and
// tail with line numbers, for a file it replaces the diff (as
// EditPreview's).
func WritePreview(st Style, file string, input json.RawMessage, width, rows int) Preview {
	var in struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(input, &in) != nil {
		return Preview{}
	}
	lines := splitLines(Sanitize(in.Content))
	if in.Content == "" {
		lines = nil
	}
	what, existing := "new file", ""
	if _, err := os.Stat(file); err == nil {
		what = "replaces the existing file"
		if existing = readForPreview(file); existing != "" {
			what += fmt.Sprintf(" (%s)", plural(len(splitLines(existing)), "line"))
		}
	}
	head := st.Dim(fmt.Sprintf("%s · %s · %s", what, plural(len(lines), "line"), byteSize(len(in.Content))))
	if existing != "" {
		return newDiffView(st, file, Sanitize(existing), Sanitize(in.Content), true, width).fit(head, rows)
	}
	all := []string{head}
	for i, l := range lines {
		body := Highlight(st, file, l)
		prefix := st.Dim(fmt.Sprintf("%4d", i+1)) + " " + st.Green("+") + " "
		for j, r := range cutStyled(body, max(width-9, 8)) {
			if j > 0 {
				prefix = strings.Repeat(" ", 7)
			}
			all = append(all, prefix+r)
		}
	}
	return fit(st, all, rows)
}

// fit cuts rows of preview to n, keeping the head and the tail and saying
// how many rows are in between; Full keeps everything for the pager.
func fit(st Style, all []string, n int) Preview {
	n = max(n, 6)
	if len(all) <= n {
		return Preview{Short: all}
	}
	headN := (n - 1) * 2 / 3
	tailN := n - 1 - headN
	short := append([]string(nil), all[:headN]...)
	short = append(short, st.Dim(fmt.Sprintf("     ⋯ %d more rows (v shows the whole of it)", len(all)-headN-tailN)))
	short = append(short, all[len(all)-tailN:]...)
	return Preview{Short: short, Full: all}
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// AskingParts are the simple commands of a shell script that the
// patterns (Decision.Pattern, "; "-separated, words with * and globs)
// cover: the parts that need approval. A script that does not parse has
// none (the whole command is then what asks).
func AskingParts(script, patterns string) []string {
	var out []string
	for _, sp := range askingSpans(script, patterns) {
		out = append(out, script[sp[0]:sp[1]])
	}
	return out
}

// askingSpans are AskingParts as byte ranges of script, in order.
func askingSpans(script, patterns string) [][2]int {
	if strings.TrimSpace(patterns) == "" {
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil
	}
	var pats [][]string
	for _, p := range strings.Split(patterns, "; ") {
		pats = append(pats, strings.Fields(p))
	}
	var out [][2]int
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var words []string
		for _, w := range call.Args {
			words = append(words, w.Lit())
		}
		if len(words) > 0 && words[0] != "" {
			words[0] = path.Base(words[0])
		}
		for _, p := range pats {
			if matchWords(p, words) {
				start, end := call.Pos().Offset(), call.End().Offset()
				if int(end) <= len(script) && start < end && (len(out) == 0 || int(start) >= out[len(out)-1][1]) {
					out = append(out, [2]int{int(start), int(end)})
				}
				break
			}
		}
		return true
	})
	return out
}

// markAsking shows a compound command with the parts that ask (spans)
// standing out, bold yellow and underlined, and the rest dimmed.
func markAsking(st Style, script string, spans [][2]int) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(colourLines(st.Dim, script[at:sp[0]]))
		b.WriteString(colourLines(func(x string) string { return st.Bold(st.Yellow(st.Underline(x))) }, script[sp[0]:sp[1]]))
		at = sp[1]
	}
	b.WriteString(colourLines(st.Dim, script[at:]))
	return b.String()
}

// matchWords matches words against a pattern of words: "*" alone matches
// any run of words, other words are globs (a word that is not a literal
// matches only "*").
func matchWords(pat, words []string) bool {
	if len(pat) == 0 {
		return len(words) == 0
	}
	if pat[0] == "*" {
		for i := 0; i <= len(words); i++ {
			if matchWords(pat[1:], words[i:]) {
				return true
			}
		}
		return false
	}
	if len(words) == 0 {
		return false
	}
	w := words[0]
	if w == "" {
		return false
	}
	if ok, _ := path.Match(pat[0], w); !ok && pat[0] != w {
		return false
	}
	return matchWords(pat[1:], words[1:])
}
