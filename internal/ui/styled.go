package ui

import (
	"strings"

	"github.com/rivo/uniseg"
)

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

// lineBreaks are the byte offsets in plain text after which a row may
// end: the Unicode line breaking algorithm's opportunities (UAX #14,
// uniseg), after a space or next to a wide character (between two
// ideographs, never before closing punctuation). Not after a slash or a
// hyphen, which UAX #14 allows: in a coding session those are paths,
// URLs and flags, which are better kept whole.
func lineBreaks(plain string) []int {
	var out []int
	state, off, lastW := -1, 0, 0
	for plain != "" {
		var seg string
		seg, plain, _, state = uniseg.FirstLineSegmentInString(plain, state)
		off += len(seg)
		eachCluster(seg, func(_ string, w int) bool { lastW = w; return true })
		_, _, nextW, _ := uniseg.FirstGraphemeClusterInString(plain, -1)
		if plain == "" || strings.HasSuffix(seg, " ") || lastW == 2 || nextW == 2 {
			out = append(out, off)
		}
	}
	return out
}

// wrapLine word-wraps one line of styled text at its line break
// opportunities; a run of spaces is one, and where a row ends, none.
func wrapLine(s string, width int) []string {
	w := &wrapper{width: width, breaks: lineBreaks(StripANSI(s))}
	walkStyled(s, func(seq, _ string) { w.seg.WriteString(seq) }, func(c string, cw int, active string) {
		if c == " " {
			w.trail++
		} else {
			if w.trail > 0 { // a space that is no break opportunity (rare): keep it
				w.seg.WriteString(strings.Repeat(" ", w.trail))
				w.segW += w.trail
				w.trail = 0
			}
			w.seg.WriteString(c)
			w.segW += cw
		}
		w.off += len(c)
		for len(w.breaks) > 0 && w.breaks[0] <= w.off {
			w.breaks = w.breaks[1:]
			w.put(active)
		}
	})
	w.put("")
	return w.out.done()
}

// wrapper is wrapLine's state: the rows, and the segment (text up to the
// next break opportunity) being read.
type wrapper struct {
	out      styledRows
	width    int
	breaks   []int
	off      int // bytes of plain text read
	seg      strings.Builder
	segW     int
	trail    int    // spaces after the segment
	pending  int    // spaces after the row's last segment
	sgrStart string // the attributes in force at the segment's start
}

// put places the segment read; active is the attributes in force after it.
func (w *wrapper) put(active string) {
	out := &w.out
	if w.segW == 0 && w.seg.Len() == 0 {
		w.pending += w.trail
		w.trail = 0
		return
	}
	// Spaces between words count as one, as they always have here (a
	// wrapped line is prose; a table that fits is never wrapped).
	gap := min(w.pending, 1)
	switch {
	case out.w > 0 && out.w+gap+w.segW > w.width:
		out.brk(w.sgrStart)
	case out.w > 0 && gap > 0:
		out.row.WriteString(" ")
		out.w++
	}
	if w.segW > w.width-out.w {
		// Wider than a row: cut it.
		for i, p := range cutStyled(w.seg.String(), w.width) {
			if i > 0 {
				out.rows = append(out.rows, out.row.String())
				out.row.Reset()
			}
			out.row.WriteString(p)
			out.w = StringWidth(p)
		}
	} else {
		out.row.WriteString(w.seg.String())
		out.w += w.segW
	}
	w.seg.Reset()
	w.segW, w.pending, w.trail = 0, w.trail, 0
	w.sgrStart = active
}
