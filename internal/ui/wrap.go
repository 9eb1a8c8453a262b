package ui

import "strings"

// Fit wraps each line of s (styled text: SGR escapes allowed) that is
// wider than width at word boundaries, so the terminal never breaks a
// word. A continuation row hangs under the line's text column: the
// column after the line's first run of two or more spaces (the
// description of a "/name  what it does" row), else its indentation. A
// word wider than a row is cut. Lines that fit are left as they are.
func Fit(s string, width int) string {
	width = max(width, 8)
	if !strings.Contains(s, "\n") && StringWidth(s) <= width {
		return s
	}
	lines := strings.Split(s, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if StringWidth(l) <= width {
			b.WriteString(l)
			continue
		}
		b.WriteString(strings.Join(fitLine(l, width), "\n"))
	}
	return b.String()
}

// FitLines is Fit for one line, as rows.
func FitLines(s string, width int) []string {
	return strings.Split(Fit(s, width), "\n")
}

// fitLine wraps one styled line wider than width.
func fitLine(l string, width int) []string {
	hang := hangColumn(StripANSI(l), width)
	head, rest := splitStyled(l, hang)
	rows := wrapLine(rest, width-hang)
	pad := strings.Repeat(" ", hang)
	for i := range rows {
		if i == 0 {
			rows[i] = head + rows[i]
		} else {
			rows[i] = pad + rows[i]
		}
	}
	return rows
}

// hangColumn is where continuation rows of plain start: the text column
// of a "label  text" row when it lies in the left half, else the
// indentation (0 when that leaves too narrow a row).
func hangColumn(plain string, width int) int {
	lead := len(plain) - len(strings.TrimLeft(plain, " "))
	hang := lead
	if i := strings.Index(plain[lead:], "  "); i >= 0 {
		j := lead + i
		for j < len(plain) && plain[j] == ' ' {
			j++
		}
		if w := StringWidth(plain[:j]); j < len(plain) && w <= width/2 {
			hang = w
		}
	}
	if width-hang < 16 {
		hang = min(lead, max(0, width-16))
	}
	return hang
}

// splitStyled cuts styled text at plain column col: head holds the first
// col columns (with their escapes), rest the remainder, opened with the
// attributes in force at the cut.
func splitStyled(s string, col int) (head, rest string) {
	if col <= 0 {
		return "", s
	}
	var h, r strings.Builder
	w := 0
	walkStyled(s, func(seq, _ string) {
		if w < col {
			h.WriteString(seq)
		} else {
			r.WriteString(seq)
		}
	}, func(c string, cw int, active string) {
		if w < col {
			h.WriteString(c)
			w += cw
			if w >= col && active != "" {
				h.WriteString("\x1b[0m")
				r.WriteString(active)
			}
			return
		}
		r.WriteString(c)
	})
	return h.String(), r.String()
}

// TruncateWords cuts plain text to at most w columns at a word boundary,
// adding "…" when it cut; a first word wider than w is cut.
func TruncateWords(s string, w int) string {
	if StringWidth(s) <= w {
		return s
	}
	t := Truncate(s, w)
	body := strings.TrimSuffix(t, "…")
	if len(body) < len(s) && s[len(body)] == ' ' {
		return strings.TrimRight(body, " ,;:") + "…"
	}
	if i := strings.LastIndexByte(body, ' '); i > 0 {
		return strings.TrimRight(body[:i], " ,;:") + "…"
	}
	return t
}
