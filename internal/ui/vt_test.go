package ui

import (
	"strconv"
	"strings"
)

// screen is a tiny terminal emulator for tests: enough of VT100 to check
// that redraws land where the code thinks they do (wrapping with the
// pending-wrap state, cursor moves, erase, scrolling into scrollback).
type screen struct {
	w, h     int
	lines    [][]rune // visible rows
	scrolled []string // rows that scrolled off the top
	row, col int
	pending  bool // at the last column after printing into it
	onlcr    bool // "\n" also returns the carriage, as the tty's output processing does
}

func newScreen(w, h int) *screen {
	s := &screen{w: w, h: h, onlcr: true}
	for range h {
		s.lines = append(s.lines, blankRow(w))
	}
	return s
}

func blankRow(w int) []rune { return []rune(strings.Repeat(" ", w)) }

func (s *screen) Write(p []byte) (int, error) {
	rs := []rune(string(p))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\r':
			s.col, s.pending = 0, false
		case '\n':
			s.lineFeed()
			if s.onlcr {
				s.col = 0
			}
			s.pending = false
		case 0x1b:
			i = s.escape(rs, i)
		default:
			s.put(r)
		}
	}
	return len(p), nil
}

func (s *screen) lineFeed() {
	if s.row == s.h-1 {
		s.scrolled = append(s.scrolled, strings.TrimRight(string(s.lines[0]), " "))
		s.lines = append(s.lines[1:], blankRow(s.w))
		return
	}
	s.row++
}

func (s *screen) put(r rune) {
	rw := RuneWidth(r)
	if rw == 0 {
		return
	}
	if s.pending || s.col+rw > s.w {
		s.col = 0
		s.lineFeed()
		s.pending = false
	}
	s.lines[s.row][s.col] = r
	if rw == 2 && s.col+1 < s.w {
		s.lines[s.row][s.col+1] = 0 // continuation cell
	}
	s.col += rw
	if s.col >= s.w {
		s.col = s.w - 1
		s.pending = true
	}
}

func (s *screen) escape(rs []rune, i int) int {
	if i+1 >= len(rs) || rs[i+1] != '[' {
		return skipEscape(rs, i)
	}
	j := i + 2
	for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
		j++
	}
	if j >= len(rs) {
		return len(rs) - 1
	}
	params := string(rs[i+2 : j])
	n := 1
	if v, err := strconv.Atoi(params); err == nil {
		n = v
	}
	s.pending = false
	switch rs[j] {
	case 'A':
		s.row = max(0, s.row-n)
	case 'B':
		s.row = min(s.h-1, s.row+n)
	case 'C':
		s.col = min(s.w-1, s.col+n)
	case 'D':
		s.col = max(0, s.col-n)
	case 'H':
		s.row, s.col = 0, 0
		if r, c, ok := strings.Cut(params, ";"); ok {
			rv, _ := strconv.Atoi(r)
			cv, _ := strconv.Atoi(c)
			s.row, s.col = min(s.h-1, max(0, rv-1)), min(s.w-1, max(0, cv-1))
		}
	case 'J':
		if params == "2" {
			for r := range s.lines {
				s.lines[r] = blankRow(s.w)
			}
			break
		}
		for c := s.col; c < s.w; c++ {
			s.lines[s.row][c] = ' '
		}
		for r := s.row + 1; r < s.h; r++ {
			s.lines[r] = blankRow(s.w)
		}
	case 'K':
		from := s.col
		if params == "2" {
			from = 0
		}
		for c := from; c < s.w; c++ {
			s.lines[s.row][c] = ' '
		}
	}
	return j
}

// text returns the visible rows, right-trimmed, without trailing blank rows.
func (s *screen) text() string {
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(strings.ReplaceAll(string(l), "\x00", ""), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// all returns scrollback and visible rows.
func (s *screen) all() string {
	v := s.text()
	if len(s.scrolled) == 0 {
		return v
	}
	return strings.Join(s.scrolled, "\n") + "\n" + v
}
