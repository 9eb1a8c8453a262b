package ui

import "strings"

// Styled text is text with SGR escapes in it (what Style makes). These
// helpers lay it out by grapheme cluster: widths come from StringWidth's
// rules, a row never ends inside a cluster, and an attribute open at a
// row's end is closed there and reopened on the next row, so prefixes
// added to rows are never styled by accident.

// walkStyled goes through styled text: esc gets each escape sequence,
// char each grapheme cluster with its width; both get the SGR attributes
// in force after what was read.
func walkStyled(s string, esc func(seq, active string), char func(c string, w int, active string)) {
	active := ""
	for s != "" {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			i = len(s)
		}
		eachCluster(s[:i], func(c string, w int) bool {
			char(c, w, active)
			return true
		})
		s = s[i:]
		if s == "" {
			return
		}
		// The escape's length, as termsafe measures it.
		rs := []rune(s[:min(len(s), 256)])
		j := skipEscape(rs, 0)
		seq := string(rs[:j+1])
		active = applySGR(active, seq)
		esc(seq, active)
		s = s[min(len(seq), len(s)):]
	}
}

// applySGR is the attributes in force after seq, given those before.
func applySGR(active, seq string) string {
	if !strings.HasPrefix(seq, "\x1b[") || !strings.HasSuffix(seq, "m") {
		return active
	}
	if seq == "\x1b[0m" || seq == "\x1b[m" {
		return ""
	}
	return active + seq
}

// styledRows collects rows of styled text.
type styledRows struct {
	rows []string
	row  strings.Builder
	w    int // columns on row
}

// brk ends the row; active is the attributes in force at the break.
func (sr *styledRows) brk(active string) {
	r := sr.row.String()
	if active != "" {
		r += "\x1b[0m"
	}
	sr.rows = append(sr.rows, r)
	sr.row.Reset()
	sr.row.WriteString(active)
	sr.w = 0
}

func (sr *styledRows) done() []string { return append(sr.rows, sr.row.String()) }

// cutStyled cuts styled text into rows of at most width columns between
// any two clusters, reopening the attributes in force on each new row
// (code, and words wider than a row).
func cutStyled(s string, width int) []string {
	width = max(width, 1)
	var out styledRows
	walkStyled(s, func(seq, _ string) { out.row.WriteString(seq) }, func(c string, cw int, active string) {
		if out.w+cw > width && out.w > 0 {
			out.brk(active)
		}
		out.row.WriteString(c)
		out.w += cw
	})
	return out.done()
}

// wrapStyled word-wraps styled text to width columns, each line of s on
// rows of its own. A word wider than the row is cut.
func wrapStyled(s string, width int) []string {
	width = max(width, 8)
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, wrapLine(para, width)...)
	}
	return out
}

// wrapLine word-wraps one line of styled text at its spaces.
func wrapLine(s string, width int) []string {
	var out styledRows
	var word strings.Builder
	wordW := 0
	sgrStart := "" // the attributes in force at the start of the current word
	putWord := func() {
		if word.Len() == 0 {
			return
		}
		switch {
		case out.w > 0 && out.w+1+wordW > width:
			out.brk(sgrStart)
		case out.w > 0:
			out.row.WriteString(" ")
			out.w++
		}
		if wordW > width-out.w {
			// Wider than a row: cut it.
			for i, p := range cutStyled(word.String(), width) {
				if i > 0 {
					out.rows = append(out.rows, out.row.String())
					out.row.Reset()
				}
				out.row.WriteString(p)
				out.w = StringWidth(p)
			}
		} else {
			out.row.WriteString(word.String())
			out.w += wordW
		}
		word.Reset()
		wordW = 0
	}
	walkStyled(s, func(seq, _ string) { word.WriteString(seq) }, func(c string, cw int, active string) {
		if c == " " {
			putWord()
			sgrStart = active
			return
		}
		word.WriteString(c)
		wordW += cw
	})
	putWord()
	return out.done()
}
