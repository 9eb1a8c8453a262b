package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
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

// langOfPath is the highlighter for a file name.
func langOfPath(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".go":
		return "go"
	case ".sh", ".bash", ".zsh":
		return "sh"
	case ".py":
		return "py"
	case ".json", ".jsonl":
		return "json"
	case ".js", ".ts", ".tsx", ".jsx", ".mjs":
		return "js"
	}
	return ""
}

// EditPreview shows an edit_file call as a diff with line numbers: each
// replaced place with two lines of context, removed lines in red, added in
// green, the code highlighted. file is the path the gate was asked about
// (read on the host to place the edit; when it cannot be read the diff has
// no line numbers). rows bounds Short.
func EditPreview(st Style, file string, input json.RawMessage, width, rows int) Preview {
	var in struct {
		Old        string `json:"old_string"`
		New        string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if json.Unmarshal(input, &in) != nil {
		return Preview{}
	}
	lang := langOfPath(file)
	var text string
	if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() && fi.Size() <= previewFileLimit {
		if b, err := os.ReadFile(file); err == nil {
			text = string(b)
		}
	}
	var out []string
	line := func(sign string, n int, code string, colour func(string) string) {
		num := "    "
		if n > 0 {
			num = fmt.Sprintf("%4d", n)
		}
		body := Highlight(st, lang, code)
		prefix := st.Dim(num) + " " + colour(sign) + " "
		for i, r := range cutStyled(body, max(width-9, 8)) {
			if i > 0 {
				prefix = strings.Repeat(" ", 5) + colour(" ") + " "
			}
			out = append(out, prefix+r)
		}
	}
	oldLines := splitLines(Sanitize(in.Old))
	newLines := splitLines(Sanitize(in.New))
	idx := -1
	if in.Old != "" && text != "" {
		idx = strings.Index(text, in.Old)
	}
	shift := 0 // how the line numbers after an earlier hunk move
	hunks := 0
	var all []string
	if idx >= 0 {
		all = splitLines(Sanitize(text))
	}
	for idx >= 0 && hunks < 50 {
		hunks++
		// Whole lines: the edit may start and end inside a line.
		ls := strings.LastIndexByte(text[:idx], '\n') + 1
		end := idx + len(in.Old)
		le := len(text)
		if end > ls && text[end-1] == '\n' {
			le = end
		} else if k := strings.IndexByte(text[end:], '\n'); k >= 0 {
			le = end + k + 1
		}
		olds := splitLines(Sanitize(text[ls:le]))
		news := splitLines(Sanitize(text[ls:idx] + in.New + text[end:le]))
		if text[ls:idx]+in.New+text[end:le] == "" {
			news = nil
		}
		first := strings.Count(text[:ls], "\n") + 1
		if hunks > 1 {
			out = append(out, st.Dim("     ⋯"))
		}
		for k := max(1, first-2); k < first; k++ {
			line(" ", k+shift, all[k-1], st.Dim)
		}
		for i, l := range olds {
			line("-", first+i, l, st.Red)
		}
		for i, l := range news {
			line("+", first+shift+i, l, st.Green)
		}
		last := first + len(olds) - 1
		for k := last + 1; k <= min(len(all), last+2); k++ {
			line(" ", k+shift+len(news)-len(olds), all[k-1], st.Dim)
		}
		shift += len(news) - len(olds)
		if !in.ReplaceAll {
			break
		}
		next := strings.Index(text[end:], in.Old)
		if next < 0 {
			break
		}
		idx = end + next
	}
	if hunks == 0 {
		// Not found (the tool will say so) or unreadable: the bare change.
		for _, l := range oldLines {
			line("-", 0, l, st.Red)
		}
		for _, l := range newLines {
			line("+", 0, l, st.Green)
		}
	}
	head := fmt.Sprintf("-%d +%d lines", len(oldLines), len(newLines))
	if hunks > 1 {
		head += fmt.Sprintf(", %d places", hunks)
	}
	out = append([]string{st.Dim(head)}, out...)
	return fit(st, out, rows)
}

// WritePreview shows a write_file call: whether it creates or replaces
// the file, its size, and the content's head and tail with line numbers.
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
	what := "new file"
	if fi, err := os.Stat(file); err == nil {
		what = "replaces the existing file"
		if fi.Mode().IsRegular() && fi.Size() <= previewFileLimit {
			if b, err := os.ReadFile(file); err == nil {
				what += fmt.Sprintf(" (%s)", plural(len(splitLines(string(b))), "line"))
			}
		}
	}
	lang := langOfPath(file)
	all := []string{st.Dim(fmt.Sprintf("%s · %s · %s", what, plural(len(lines), "line"), byteSize(len(in.Content))))}
	for i, l := range lines {
		body := Highlight(st, lang, l)
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
