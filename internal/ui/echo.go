package ui

import (
	"strings"
	"unicode"
)

// Echo is an accepted prompt as it stays on screen and in the scrollback:
// prompt, then each line of the text word-wrapped under it, continuation
// rows hanging under the text's first column and later lines (after a
// newline the user typed) opened by cont. The editing layout breaks rows
// at the last column, mid-word, so that the cursor can be placed; what
// stays once the line is sent is read, not edited.
func Echo(prompt, cont string, lines []string, width int) string {
	width = max(width, 8)
	var b strings.Builder
	for i, l := range lines {
		head := prompt
		if i > 0 {
			head = cont
			b.WriteByte('\n')
		}
		hw := StringWidth(head)
		if hw > width/2 {
			hw = 0 // a long prompt: wrap under the row's start
		}
		rows := []string{l}
		if StringWidth(head)+StringWidth(l) > width {
			rows = wrapLine(l, width-hw)
		}
		for j, r := range rows {
			if j == 0 {
				b.WriteString(head + r)
				continue
			}
			b.WriteString("\n" + strings.Repeat(" ", hw) + r)
		}
	}
	return b.String()
}

// shown is the buffer as the layout shows it (collapsed pastes as their
// labels, tabs as spaces, control characters as ^X), one string a line.
func (s *lineState) shown() []string {
	var lines []string
	var b strings.Builder
	for _, r := range s.buf {
		switch l := s.pasteLabel(r); {
		case r == '\n':
			lines = append(lines, b.String())
			b.Reset()
		case l != "":
			b.WriteString(s.searchStyle.Dim(l))
		case r == '\t':
			b.WriteString("    ")
		case RuneWidth(r) == 0 && unicode.IsControl(r):
			b.WriteString("^" + string(rune('@'+r%32)))
		default:
			b.WriteRune(r)
		}
	}
	return append(lines, b.String())
}
