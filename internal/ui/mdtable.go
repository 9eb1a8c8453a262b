package ui

import (
	"strings"

	extast "github.com/yuin/goldmark/extension/ast"
)

// table lays out a GFM table in width columns: header in bold, thin
// rules between columns, each column aligned as its delimiter says
// (":--:" centred, "--:" right). A table wider than width narrows its
// widest columns first, never below their longest word, and wraps their
// cells onto more rows; one too wide even then (many columns in a narrow
// window) is shown a record at a time, "header: value" per line.
// No row is ever wider than width.
func (m *mdRenderer) table(t *extast.Table, width int) []string {
	var cells [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var r []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			s := m.inline(c)
			if _, head := row.(*extast.TableHeader); head {
				s = m.st.Bold(s)
			}
			r = append(r, s)
		}
		cells = append(cells, r)
	}
	align := make([]extast.Alignment, len(t.Alignments))
	copy(align, t.Alignments)
	return layoutTable(m.st, cells, align, width)
}

// layoutTable lays out rendered cells (the first row the header).
func layoutTable(st Style, rendered [][]string, align []extast.Alignment, width int) []string {
	ncol := len(align)
	for _, r := range rendered {
		ncol = max(ncol, len(r))
	}
	if ncol == 0 {
		return nil
	}
	widths := make([]int, ncol)
	words := make([]int, ncol) // the widest word of each column
	for i, r := range rendered {
		for len(r) < ncol {
			r = append(r, "")
		}
		rendered[i] = r
		for j, c := range r {
			widths[j] = max(widths[j], StringWidth(c))
			for _, w := range strings.Fields(StripANSI(c)) {
				words[j] = max(words[j], StringWidth(w))
			}
		}
	}
	if !fitColumns(widths, words, width-3*(ncol-1)) {
		return renderRecords(st, rendered, width)
	}
	var out []string
	for i, r := range rendered {
		out = append(out, tableRow(st, r, widths, align)...)
		if i == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("─", w))
			}
			out = append(out, st.Dim(strings.Join(rule, "─┼─")))
		}
	}
	return out
}

// tableRow draws one table row, its cells wrapped to their columns.
func tableRow(st Style, r []string, widths []int, align []extast.Alignment) []string {
	ncol := len(widths)
	cells := make([][]string, ncol)
	height := 1
	for j, c := range r {
		cells[j] = []string{c}
		if StringWidth(c) > widths[j] {
			cells[j] = wrapLine(c, widths[j])
		}
		height = max(height, len(cells[j]))
	}
	var out []string
	for k := range height {
		var b strings.Builder
		for j := range ncol {
			c := ""
			if k < len(cells[j]) {
				c = cells[j][k]
			}
			switch {
			case j > 0 && c == "" && j == ncol-1:
				b.WriteString(st.Dim(" │"))
			case j > 0:
				b.WriteString(st.Dim(" │ "))
			}
			pad := max(0, widths[j]-StringWidth(c))
			left := 0
			if j < len(align) {
				switch align[j] {
				case extast.AlignRight:
					left = pad
				case extast.AlignCenter:
					left = pad / 2
				}
			}
			if c == "" && j == ncol-1 {
				break // no trailing spaces
			}
			b.WriteString(strings.Repeat(" ", left) + c)
			if j < ncol-1 {
				b.WriteString(strings.Repeat(" ", pad-left))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// minColumn is the narrowest a column is made (when its content is wider).
const minColumn = 4

// fitColumns narrows widths (each column's natural width) until they sum
// to at most room, taking a column from the widest each time, never below
// its widest word (so no word is cut) nor minColumn. It reports false when
// that does not fit.
func fitColumns(widths, words []int, room int) bool {
	total := 0
	floors := make([]int, len(widths))
	for j, w := range widths {
		total += w
		floors[j] = min(w, max(words[j], minColumn))
	}
	for ; total > room; total-- {
		widest := -1
		for j, w := range widths {
			if w > floors[j] && (widest < 0 || w > widths[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			return false
		}
		widths[widest]--
	}
	return true
}

// renderRecords shows a table too wide for the window one record at a
// time: each cell on its own rows under its header's name.
func renderRecords(st Style, rendered [][]string, width int) []string {
	var out []string
	head := rendered[0]
	for i, r := range rendered[1:] {
		if i > 0 {
			out = append(out, st.Dim(strings.Repeat("─", min(width, 20))))
		}
		for j, c := range r {
			name := ""
			if j < len(head) {
				name = head[j]
			}
			out = append(out, wrapLine(name+st.Dim(":")+" "+c, max(width, 8))...)
		}
	}
	return out
}
