package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// diffView draws the minimal line diff of before and after (go-udiff,
// gopls's Myers diff) as the permission prompt shows it.
type diffView struct {
	st             Style
	lang           string // a fence language or file name, for Highlight
	before         string
	edits          []udiff.Edit
	numbered       bool // before is the whole file: show line numbers
	width          int
	removed, added int
}

func newDiffView(st Style, lang, before, after string, numbered bool, width int) *diffView {
	d := &diffView{st: st, lang: lang, before: before, edits: udiff.Lines(before, after), numbered: numbered, width: width}
	for _, h := range d.hunks(0) {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				d.removed++
			case udiff.Insert:
				d.added++
			}
		}
	}
	return d
}

func (d *diffView) hunks(context int) []*udiff.Hunk {
	u, err := udiff.ToUnifiedDiff("", "", d.before, d.edits, context)
	if err != nil {
		return nil
	}
	return u.Hunks
}

// fit is the preview under head: with two lines of context around each
// change when that fits in rows, else with less context, else cut with a
// row saying how many rows are hidden; Full has the two lines of context.
func (d *diffView) fit(head string, rows int) Preview {
	n := max(rows, 6)
	full := append([]string{head}, d.rows(2)...)
	if len(full) <= n {
		return Preview{Short: full}
	}
	for context := 1; context >= 0; context-- {
		if short := append([]string{head}, d.rows(context)...); len(short) <= n || context == 0 {
			pv := fit(d.st, short, n)
			pv.Full = full
			return pv
		}
	}
	return Preview{}
}

// rows draws the diff's hunks with context lines of context, a dimmed
// ⋯ between two hunks.
func (d *diffView) rows(context int) []string {
	var out []string
	for i, h := range d.hunks(context) {
		if i > 0 {
			out = append(out, d.st.Dim("     ⋯"))
		}
		oldN, newN := h.FromLine, h.ToLine
		ls := h.Lines
		for j := 0; j < len(ls); {
			if ls[j].Kind != udiff.Delete {
				if ls[j].Kind == udiff.Insert {
					out = append(out, d.line("+", newN, ls[j].Content, nil)...)
				} else {
					out = append(out, d.line(" ", newN, ls[j].Content, nil)...)
					oldN++
				}
				newN++
				j++
				continue
			}
			// A run of deletions, and the insertions after it: lines
			// changed in place pair up and get their changed words marked.
			k := j
			for k < len(ls) && ls[k].Kind == udiff.Delete {
				k++
			}
			e := k
			for e < len(ls) && ls[e].Kind == udiff.Insert {
				e++
			}
			paired := e-k == k-j
			for x := j; x < k; x++ {
				var marks [][2]int
				if paired {
					marks, _ = wordChanges(ls[x].Content, ls[k+x-j].Content)
				}
				out = append(out, d.line("-", oldN, ls[x].Content, marks)...)
				oldN++
			}
			for x := k; x < e; x++ {
				var marks [][2]int
				if paired {
					_, marks = wordChanges(ls[j+x-k].Content, ls[x].Content)
				}
				out = append(out, d.line("+", newN, ls[x].Content, marks)...)
				newN++
			}
			j = e
		}
	}
	return out
}

// line draws one diff line: its number (in the new file, or the old one
// for a removed line), its sign and its code, highlighted or, when marks
// are given, with those byte ranges marked as the change.
func (d *diffView) line(sign string, n int, code string, marks [][2]int) []string {
	st := d.st
	code = strings.TrimSuffix(code, "\n")
	colour := st.Dim
	switch sign {
	case "-":
		colour = st.Red
	case "+":
		colour = st.Green
	}
	num := "    "
	if d.numbered && n > 0 {
		num = fmt.Sprintf("%4d", n)
	}
	body := Highlight(st, d.lang, code)
	if marks != nil {
		body = markChanges(st, sign, code, marks)
	}
	prefix := st.Dim(num) + " " + colour(sign) + " "
	var out []string
	for i, r := range cutStyled(body, max(d.width-9, 8)) {
		if i > 0 {
			prefix = strings.Repeat(" ", 5) + colour(" ") + " "
		}
		out = append(out, prefix+r)
	}
	return out
}

// wordChanges are the byte ranges of old and new that differ, widened to
// whole words; nil for both when most of the line changed (marking it
// all would say nothing).
func wordChanges(old, new string) (o, n [][2]int) {
	old, new = strings.TrimSuffix(old, "\n"), strings.TrimSuffix(new, "\n")
	delta, changed := 0, 0
	for _, e := range udiff.Strings(old, new) {
		ns := e.Start + delta
		o = appendSpan(o, wordSpan(old, e.Start, e.End))
		n = appendSpan(n, wordSpan(new, ns, ns+len(e.New)))
		delta += len(e.New) - (e.End - e.Start)
	}
	for _, s := range o {
		changed += s[1] - s[0]
	}
	if o == nil && n == nil || 2*changed > len(old) {
		return nil, nil
	}
	return o, n
}

// appendSpan adds span s, merged with the last one when they touch.
func appendSpan(spans [][2]int, s [2]int) [][2]int {
	if s[0] == s[1] {
		return spans
	}
	if k := len(spans) - 1; k >= 0 && s[0] <= spans[k][1] {
		spans[k][1] = max(spans[k][1], s[1])
		return spans
	}
	return append(spans, s)
}

// wordSpan widens [start, end) of s to whole words.
func wordSpan(s string, start, end int) [2]int {
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:start])
		if !isIdent(r) {
			break
		}
		start -= size
	}
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if !isIdent(r) {
			break
		}
		end += size
	}
	return [2]int{start, end}
}

// markChanges draws code with the spans in reverse video of the sign's
// colour.
func markChanges(st Style, sign, code string, spans [][2]int) string {
	mark := "7;32"
	if sign == "-" {
		mark = "7;31"
	}
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(code[at:s[0]])
		b.WriteString(st.sgr(mark, code[s[0]:s[1]]))
		at = s[1]
	}
	b.WriteString(code[at:])
	return b.String()
}

// changedLines are the lines the minimal diff of before and after removes
// and adds.
func changedLines(before, after string) (removed, added []string) {
	if before != "" && !strings.HasSuffix(before, "\n") {
		before += "\n"
	}
	if after != "" && !strings.HasSuffix(after, "\n") {
		after += "\n"
	}
	u, err := udiff.ToUnifiedDiff("", "", before, udiff.Lines(before, after), 0)
	if err != nil {
		return nil, nil
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				removed = append(removed, strings.TrimSuffix(l.Content, "\n"))
			case udiff.Insert:
				added = append(added, strings.TrimSuffix(l.Content, "\n"))
			}
		}
	}
	return removed, added
}
