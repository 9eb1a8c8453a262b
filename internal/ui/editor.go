package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/term"
)

// ErrInterrupt is returned by ReadLine when Ctrl-C is pressed at an empty
// prompt. The caller decides what it means (harness quits on the second in
// a row).
var ErrInterrupt = errors.New("interrupted")

// Completer proposes completions for the word that ends at pos in line
// (pos counts runes). Each candidate replaces that whole word; the word is
// the run of non-space characters before pos.
type Completer func(line string, pos int) []string

// EditorOptions configure an Editor.
type EditorOptions struct {
	// HistoryPath is the file that keeps submitted lines across sessions
	// (harness uses ~/.agents/history). Empty keeps history in memory.
	HistoryPath string
	// HistoryMax bounds the entries kept; 0 means 1000.
	HistoryMax int
	// NoHistory turns recording off (for answers to prompts).
	NoHistory bool
	// Completer serves Tab; nil disables completion.
	Completer Completer
	// OnResize is called when the terminal was resized while the line is
	// edited (see Input.Resized), before the line is drawn again from the
	// cursor's row: it may clear and redraw the screen above.
	OnResize func()
	// OnBackTab, when set, is called on Shift+Tab and returns the prompt
	// to show from then on (the interactive session cycles the permission
	// mode and names it in the prompt).
	OnBackTab func() string
	// Describe gives a completion candidate's one-line description, shown
	// when candidates are listed (slash commands); nil shows names only.
	Describe func(candidate string) string
	// EscapeInterrupts makes a lone Esc end the read with ErrInterrupt, as
	// Ctrl-C does (the permission prompt: Esc stops the turn there too).
	EscapeInterrupts bool
	// Popup opens a menu under the input as a word is typed (/ commands,
	// @ files); nil: none. While it is open Up and Down move in it, Tab
	// or Enter take the highlighted entry, Esc closes it.
	Popup Popup
	// OnPoke, when set, is called after Input.Poke while a line is edited:
	// the input is taken off the screen, the terminal is back in its
	// usual mode, and OnPoke may print or ask (a background task's news or
	// question); the line is then drawn again below what it showed.
	OnPoke func()
	// ForceRaw uses the key-by-key editor even when input is not a terminal
	// and leaves the terminal mode alone. Tests use it to drive the editor
	// with byte sequences.
	ForceRaw bool
}

// Editor reads lines from a terminal with editing, history, multi-line
// input, bracketed paste and completion. When the input is not a terminal
// it reads plain lines.
type Editor struct {
	in   *Input
	t    *Term
	opts EditorOptions

	history []string
	loaded  bool
	cooked  func() (raw func()) // leaves raw mode for OnPoke; nil when ReadLine did not enter it
}

// NewEditor returns an editor reading from in and drawing on t.
func NewEditor(in *Input, t *Term, opts EditorOptions) *Editor {
	if opts.HistoryMax <= 0 {
		opts.HistoryMax = 1000
	}
	return &Editor{in: in, t: t, opts: opts}
}

// History returns the entries, oldest first.
func (e *Editor) History() []string {
	e.loadHistory()
	return append([]string(nil), e.history...)
}

// ReadLine shows prompt and returns the line the user submitted, without
// its newline. It returns ErrInterrupt for Ctrl-C at an empty line, io.EOF
// for Ctrl-D at an empty line or the end of input, and ctx's error when ctx
// ends first.
func (e *Editor) ReadLine(ctx context.Context, prompt string) (string, error) {
	e.loadHistory()
	f, isFile := e.in.File()
	tty := isFile && term.IsTerminal(int(f.Fd()))
	if !tty && !e.opts.ForceRaw {
		return e.readPlain(ctx, prompt)
	}
	if tty && !e.opts.ForceRaw {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return e.readPlain(ctx, prompt)
		}
		defer term.Restore(int(f.Fd()), old) //nolint:errcheck // best effort on the way out
		e.cooked = func() func() {
			term.Restore(int(f.Fd()), old)              //nolint:errcheck // best effort
			return func() { term.MakeRaw(int(f.Fd())) } //nolint:errcheck // as above
		}
		defer func() { e.cooked = nil }()
		io.WriteString(e.t.Out, "\x1b[?2004h")
		defer io.WriteString(e.t.Out, "\x1b[?2004l")
	}
	line, err := e.edit(ctx, prompt)
	if err == nil && !e.opts.NoHistory {
		e.add(line)
	}
	return line, err
}

// ReadLineInitial is ReadLine with initial already typed, for the user
// to keep, change or erase (a form's default). Without a terminal, where
// nothing can be prefilled, an empty line is initial.
func (e *Editor) ReadLineInitial(ctx context.Context, prompt, initial string) (string, error) {
	f, isFile := e.in.File()
	if tty := isFile && term.IsTerminal(int(f.Fd())); !tty && !e.opts.ForceRaw {
		line, err := e.readPlain(ctx, prompt)
		if err == nil && line == "" {
			line = initial
		}
		return line, err
	}
	e.in.Unread([]byte(initial))
	return e.ReadLine(ctx, prompt)
}

func (e *Editor) readPlain(ctx context.Context, prompt string) (string, error) {
	if e.t.TTY {
		io.WriteString(e.t.Out, prompt)
	}
	var b []byte
	for {
		c, err := e.in.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) && len(b) > 0 {
				break
			}
			return "", err
		}
		if c == '\n' {
			break
		}
		b = append(b, c)
	}
	line := strings.TrimSuffix(string(b), "\r")
	if !e.opts.NoHistory {
		e.add(line)
	}
	return line, nil
}

// lineState is the editing state of one ReadLine.
type lineState struct {
	prompt, cont string
	buf          []rune
	pos          int
	rows         int // rows between the prompt's first row and the cursor, as last drawn
	paste        bool
	poked        bool     // Input.Poke came during a paste: step aside at its end
	pasted       []rune   // the paste streaming in, until its end
	pastes       []string // long pastes, shown collapsed: pasteRune+i stands for pastes[i]
	yank         []rune
	hidx         int    // index into history; len(history) is the line being edited
	saved        []rune // the line being edited while browsing history

	// Reverse search (Ctrl-R): the query, the history index of the match
	// shown, and what to put back on Ctrl-G.
	search      bool
	query       []rune
	sidx        int
	prePrompt   string
	preBuf      []rune
	prePos      int
	searchStyle Style

	// The pop-up menu: the word it is for, its items, the highlighted one,
	// and a word whose menu Esc closed (it stays closed until the word
	// changes).
	popWord, popShut string
	pop              []MenuItem
	popSel           int
}

func (e *Editor) edit(ctx context.Context, prompt string) (string, error) {
	s := &lineState{prompt: prompt, cont: e.t.Style.Dim("… "), hidx: len(e.history)}
	e.refresh(s)
	for {
		k, err := readKey(ctx, e.in)
		if err != nil {
			if errors.Is(err, io.EOF) && len(s.buf) > 0 {
				e.finish(s)
				return string(s.buf), nil
			}
			e.finish(s)
			return "", err
		}
		if e.applyPopup(s, k) {
			if !e.in.Buffered() {
				e.refresh(s)
			}
			continue
		}
		done, line, err := e.apply(s, k)
		if done {
			return line, err
		}
		e.updatePopup(s, k)
		// While a paste streams in, redraw once at the end of the burst.
		if !e.in.Buffered() {
			e.refresh(s)
		}
	}
}

// apply performs one key. done reports that ReadLine returns line, err.
func (e *Editor) apply(s *lineState, k key) (done bool, line string, err error) {
	if s.search {
		if e.applySearch(s, k) {
			return false, "", nil
		}
		// Any other key accepts the match and is then applied as usual.
	}
	if s.paste {
		e.pasteKey(s, k)
		return false, "", nil
	}
	if s.editKey(k) {
		return false, "", nil
	}
	return e.lineKey(s, k)
}

// pasteKey takes a key while a bracketed paste streams in: its text is
// collected, not acted on, until its end.
func (e *Editor) pasteKey(s *lineState, k key) {
	switch k.kind {
	case keyPasteEnd:
		s.paste = false
		s.endPaste()
		if s.poked && e.opts.OnPoke != nil {
			s.poked = false
			e.stepAside(s)
		}
	case keyPoke:
		s.poked = true // after the paste: its bytes are still coming
	case keyEnter, keyNewline:
		s.pasted = append(s.pasted, '\n')
	case keyTab:
		s.pasted = append(s.pasted, '\t')
	case keyRune:
		s.pasted = append(s.pasted, k.r)
	}
}

// editKey performs a key that only edits the buffer or moves the cursor,
// and reports whether k was one.
func (s *lineState) editKey(k key) bool {
	switch k.kind {
	case keyRune:
		s.insert(k.r)
	case keyNewline:
		s.insert('\n')
	case keyPasteStart:
		s.paste = true
	case keyBackspace:
		if s.pos > 0 {
			s.buf = append(s.buf[:s.pos-1], s.buf[s.pos:]...)
			s.pos--
		}
	case keyDelete:
		if s.pos < len(s.buf) {
			s.buf = append(s.buf[:s.pos], s.buf[s.pos+1:]...)
		}
	case keyLeft:
		if s.pos > 0 {
			s.pos--
		}
	case keyRight:
		if s.pos < len(s.buf) {
			s.pos++
		}
	case keyHome:
		s.pos = s.lineStart()
	case keyEnd:
		s.pos = s.lineEnd()
	case keyWordLeft:
		s.pos = s.wordLeft()
	case keyWordRight:
		s.pos = s.wordRight()
	case keyKillEnd:
		end := s.lineEnd()
		if end == s.pos && end < len(s.buf) {
			end++ // at the end of a line of several: join with the next
		}
		s.kill(s.pos, end)
	case keyKillStart:
		s.kill(s.lineStart(), s.pos)
	case keyKillWord:
		s.kill(s.wordLeft(), s.pos)
	case keyDeleteWord:
		s.kill(s.pos, s.wordRight())
	case keyYank:
		for _, r := range s.yank {
			s.insert(r)
		}
	default:
		return false
	}
	return true
}

// kill cuts buf[start:end] into the yank buffer; the cursor ends at start.
func (s *lineState) kill(start, end int) {
	s.yank = append([]rune(nil), s.buf[start:end]...)
	s.buf = append(s.buf[:start], s.buf[end:]...)
	s.pos = start
}

// lineKey performs a key that ends the line, reaches outside the buffer
// (history, completion, search, the screen) or calls back to the caller.
func (e *Editor) lineKey(s *lineState, k key) (done bool, line string, err error) {
	switch k.kind {
	case keyEnter:
		if s.pos > 0 && s.buf[s.pos-1] == '\\' && s.pos == len(s.buf) {
			// \ then Enter continues the prompt on a new line.
			s.buf[s.pos-1] = '\n'
			return false, "", nil
		}
		e.finish(s)
		return true, s.text(), nil
	case keyEscape:
		// A lone Esc does nothing at the prompt (and never eats the
		// next key); where it interrupts, it is Ctrl-C.
		if e.opts.EscapeInterrupts {
			e.finish(s)
			return true, "", ErrInterrupt
		}
	case keyInterrupt:
		if len(s.buf) == 0 {
			e.finish(s)
			return true, "", ErrInterrupt
		}
		s.buf, s.pos = nil, 0
		s.hidx = len(e.history)
	case keyEOF:
		if len(s.buf) == 0 {
			e.finish(s)
			return true, "", io.EOF
		}
		if s.pos < len(s.buf) {
			s.buf = append(s.buf[:s.pos], s.buf[s.pos+1:]...)
		}
	default:
		e.controlKey(s, k)
	}
	return false, "", nil
}

// controlKey performs a key that neither edits the buffer nor ends the
// line.
func (e *Editor) controlKey(s *lineState, k key) {
	switch k.kind {
	case keyBackTab:
		if e.opts.OnBackTab != nil {
			s.prompt = e.opts.OnBackTab()
		}
	case keyResize:
		if e.opts.OnResize != nil {
			// The screen is redrawn from the top: the input starts on a
			// fresh row, with nothing stale above it.
			e.opts.OnResize()
			s.rows = 0
		}
	case keyPoke:
		if e.opts.OnPoke != nil {
			e.stepAside(s)
		}
	case keyUp:
		if s.lineStart() > 0 {
			s.verticalMove(-1)
		} else {
			e.historyMove(s, -1)
		}
	case keyDown:
		if s.lineEnd() < len(s.buf) {
			s.verticalMove(+1)
		} else {
			e.historyMove(s, +1)
		}
	case keyTab:
		e.complete(s)
	case keySearch:
		s.search, s.query, s.sidx = true, nil, len(e.history)
		s.prePrompt, s.preBuf, s.prePos = s.prompt, append([]rune(nil), s.buf...), s.pos
		s.searchStyle = e.t.Style
		e.searchFrom(s, len(e.history)-1)
	case keyClear:
		io.WriteString(e.t.Out, "\x1b[H\x1b[2J")
		s.rows = 0
	}
}

// applySearch handles a key in reverse-search mode and reports whether it
// consumed it. Typing narrows, Ctrl-R finds an older match, Backspace
// widens, Ctrl-G or Ctrl-C gives up (the line comes back as it was); any
// other key leaves search mode with the match as the line.
func (e *Editor) applySearch(s *lineState, k key) bool {
	switch k.kind {
	case keyRune:
		s.query = append(s.query, k.r)
		e.searchFrom(s, s.sidx)
	case keyBackspace:
		if len(s.query) > 0 {
			s.query = s.query[:len(s.query)-1]
		}
		e.searchFrom(s, len(e.history)-1)
	case keySearch:
		e.searchFrom(s, s.sidx-1)
	case keyCancel, keyInterrupt:
		s.search = false
		s.prompt, s.buf, s.pos = s.prePrompt, s.preBuf, s.prePos
	default:
		s.search = false
		s.prompt = s.prePrompt
		s.hidx = len(e.history)
		return false
	}
	return true
}

// searchFrom shows the newest history entry at or before index from that
// contains the query.
func (e *Editor) searchFrom(s *lineState, from int) {
	q := string(s.query)
	found := false
	if q == "" {
		s.buf, s.pos = append([]rune(nil), s.preBuf...), s.prePos
		s.prompt = s.searchStyle.Dim("(search) : ")
		return
	}
	for i := min(from, len(e.history)-1); i >= 0; i-- {
		if j := strings.Index(e.history[i], q); j >= 0 {
			s.sidx = i
			s.buf = []rune(e.history[i])
			s.pos = len([]rune(e.history[i][:j]))
			found = true
			break
		}
	}
	label := "search"
	if !found {
		label = "no match" // the last match stays on the line
	}
	s.prompt = s.searchStyle.Dim("("+label+") ") + q + s.searchStyle.Dim(": ")
}

// pasteRune is the first of the private-use runes that stand for a
// collapsed paste in the buffer.
const pasteRune = 0xF0000

// collapseLines is how many lines a paste needs to be shown collapsed.
const collapseLines = 6

// endPaste inserts the paste that just ended: a long one as one
// placeholder, shown "[pasted 60 lines]", so it takes one row and the
// screen never holds two copies of it.
func (s *lineState) endPaste() {
	p := s.pasted
	s.pasted = nil
	if strings.Count(string(p), "\n") < collapseLines-1 || len(s.pastes) >= 0xFFFD {
		for _, r := range p {
			s.insert(r)
		}
		return
	}
	s.pastes = append(s.pastes, string(p))
	s.insert(rune(pasteRune + len(s.pastes) - 1))
}

// pasteLabel is how a collapsed paste shows, or "" when r is not one.
func (s *lineState) pasteLabel(r rune) string {
	i := int(r) - pasteRune
	if i < 0 || i >= len(s.pastes) {
		return ""
	}
	n := strings.Count(strings.TrimSuffix(s.pastes[i], "\n"), "\n") + 1
	return fmt.Sprintf("[pasted %d lines]", n)
}

// text is the buffer with collapsed pastes put back.
func (s *lineState) text() string {
	if len(s.pastes) == 0 {
		return string(s.buf)
	}
	var b strings.Builder
	for _, r := range s.buf {
		if i := int(r) - pasteRune; i >= 0 && i < len(s.pastes) {
			b.WriteString(s.pastes[i])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *lineState) insert(r rune) {
	s.buf = append(s.buf, 0)
	copy(s.buf[s.pos+1:], s.buf[s.pos:])
	s.buf[s.pos] = r
	s.pos++
}

func (s *lineState) lineStart() int {
	i := s.pos
	for i > 0 && s.buf[i-1] != '\n' {
		i--
	}
	return i
}

func (s *lineState) lineEnd() int {
	i := s.pos
	for i < len(s.buf) && s.buf[i] != '\n' {
		i++
	}
	return i
}

func (s *lineState) wordLeft() int {
	i := s.pos
	for i > 0 && unicode.IsSpace(s.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(s.buf[i-1]) {
		i--
	}
	return i
}

func (s *lineState) wordRight() int {
	i := s.pos
	for i < len(s.buf) && unicode.IsSpace(s.buf[i]) {
		i++
	}
	for i < len(s.buf) && !unicode.IsSpace(s.buf[i]) {
		i++
	}
	return i
}

// verticalMove moves the cursor to the same column of the previous (-1) or
// next (+1) logical line of a multi-line input.
func (s *lineState) verticalMove(dir int) {
	col := s.pos - s.lineStart()
	if dir < 0 {
		s.pos = s.lineStart() - 1 // on the previous line's newline
	} else {
		s.pos = s.lineEnd() + 1 // at the next line's start
	}
	start, end := s.lineStart(), s.lineEnd()
	s.pos = min(start+col, end)
}

func (e *Editor) historyMove(s *lineState, dir int) {
	n := s.hidx + dir
	if n < 0 || n > len(e.history) {
		return
	}
	if s.hidx == len(e.history) {
		s.saved = append([]rune(nil), s.buf...)
	}
	s.hidx = n
	if n == len(e.history) {
		s.buf = append([]rune(nil), s.saved...)
	} else {
		s.buf = []rune(e.history[n])
	}
	s.pos = len(s.buf)
	if dir > 0 {
		// Coming down into a multi-line entry, start on its first line so
		// Down keeps walking through it.
		if i := strings.IndexRune(string(s.buf), '\n'); i >= 0 && n != len(e.history) {
			s.pos = len([]rune(string(s.buf)[:i]))
		}
	}
}

// complete applies Tab: a single candidate is inserted (with a space
// unless it names a directory), several extend the word to their common
// prefix, and when that adds nothing they are listed under the prompt.
func (e *Editor) complete(s *lineState) {
	if e.opts.Completer == nil {
		return
	}
	start := s.pos
	for start > 0 && !unicode.IsSpace(s.buf[start-1]) {
		start--
	}
	word := string(s.buf[start:s.pos])
	cands := e.opts.Completer(string(s.buf), s.pos)
	if len(cands) == 0 {
		return
	}
	repl := commonPrefix(cands)
	if len(cands) == 1 && !strings.HasSuffix(repl, "/") {
		repl += " "
	}
	if repl != word && strings.HasPrefix(repl, word) || len(cands) == 1 {
		rest := append([]rune(repl), s.buf[s.pos:]...)
		s.buf = append(s.buf[:start], rest...)
		s.pos = start + len([]rune(repl))
		return
	}
	// List the candidates below the input, then redraw the prompt under them.
	e.moveToEnd(s)
	w := e.t.Width()
	colw := 0
	for _, c := range cands {
		colw = max(colw, StringWidth(c)+2)
	}
	perRow := max(1, w/colw)
	var b strings.Builder
	b.WriteString("\r\n")
	if e.opts.Describe != nil {
		// One candidate a row, with what it does.
		for _, c := range cands {
			pad := strings.Repeat(" ", max(1, colw-StringWidth(c)))
			b.WriteString(c + pad + e.t.Style.Dim(Truncate(e.opts.Describe(c), max(4, w-1-colw))) + "\r\n")
		}
		io.WriteString(e.t.Out, b.String())
		s.rows = 0
		return
	}
	for i, c := range cands {
		b.WriteString(c)
		if (i+1)%perRow == 0 || i == len(cands)-1 {
			b.WriteString("\r\n")
		} else {
			b.WriteString(strings.Repeat(" ", colw-StringWidth(c)))
		}
	}
	io.WriteString(e.t.Out, b.String())
	s.rows = 0
}

func commonPrefix(ss []string) string {
	p := []rune(ss[0])
	for _, s := range ss[1:] {
		r := []rune(s)
		n := 0
		for n < len(p) && n < len(r) && p[n] == r[n] {
			n++
		}
		p = p[:n]
	}
	return string(p)
}

// layout computes where each cell of prompt+buffer lands for width w. It
// returns the text to write, the cursor's row and column, and the end
// row. Wrapping is done explicitly (padding a row that cannot fit the next
// wide character) so the drawn text and the computed positions agree on
// every terminal.
func (s *lineState) layout(w int) (out string, crow, ccol, erow int) {
	var b strings.Builder
	b.WriteString(s.prompt)
	row, col := 0, StringWidth(s.prompt)%w
	row += StringWidth(s.prompt) / w
	crow, ccol = -1, -1
	contw := StringWidth(s.cont)
	for i := 0; i <= len(s.buf); i++ {
		if i == len(s.buf) {
			if crow < 0 {
				crow, ccol = row, col
				if col >= w {
					crow, ccol = row+1, 0
				}
			}
			break
		}
		r := s.buf[i]
		if r == '\n' {
			if i == s.pos {
				crow, ccol = row, min(col, w-1)
			}
			b.WriteString("\r\n")
			b.WriteString(s.cont)
			row, col = row+1, contw
			continue
		}
		text, rw := string(r), RuneWidth(r)
		if l := s.pasteLabel(r); l != "" {
			text, rw = s.searchStyle.Dim(l), StringWidth(l)
			if rw > w {
				text, rw = Truncate(l, w), w
			}
		} else if r == '\t' {
			text, rw = "    ", 4
		} else if rw == 0 && unicode.IsControl(r) {
			text, rw = "^"+string(rune('@'+r%32)), 2
		}
		if col+rw > w {
			b.WriteString(strings.Repeat(" ", w-col))
			row, col = row+1, 0
		}
		if i == s.pos {
			crow, ccol = row, col
		}
		b.WriteString(text)
		col += rw
	}
	if col >= w {
		// The terminal is in its pending-wrap state; make the wrap real so
		// the cursor's position is known.
		b.WriteString("\r\n")
		row, col = row+1, 0
	}
	return b.String(), crow, ccol, row
}

// refresh redraws the prompt and buffer in place.
func (e *Editor) refresh(s *lineState) {
	out, crow, ccol, erow := s.layout(e.t.Width())
	var b strings.Builder
	if s.rows > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", s.rows)
	}
	b.WriteString("\r\x1b[J")
	b.WriteString(out)
	up := erow - crow
	if len(s.pop) > 0 && !s.search {
		rows := renderPopup(e.t.Style, s.pop, s.popSel, e.t.Width())
		b.WriteString("\r\n" + strings.Join(rows, "\r\n"))
		up += len(rows)
	}
	if up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r")
	if ccol > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", ccol)
	}
	s.rows = crow
	io.WriteString(e.t.Out, b.String())
}

// stepAside takes the input off the screen and runs OnPoke with the
// terminal in its usual mode; the caller draws the input again.
func (e *Editor) stepAside(s *lineState) {
	var b strings.Builder
	if s.rows > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", s.rows)
	}
	b.WriteString("\r\x1b[J")
	io.WriteString(e.t.Out, b.String())
	s.rows = 0
	raw := func() {}
	if e.cooked != nil {
		raw = e.cooked()
	}
	e.opts.OnPoke()
	raw()
}

// moveToEnd puts the cursor after the last row of the input.
func (e *Editor) moveToEnd(s *lineState) {
	_, crow, _, erow := s.layout(e.t.Width())
	var b strings.Builder
	if down := erow - crow; down > 0 {
		fmt.Fprintf(&b, "\x1b[%dB", down)
	}
	b.WriteString("\r")
	s.rows = erow
	io.WriteString(e.t.Out, b.String())
}

// finish leaves the final text on screen, word-wrapped (Echo), and moves
// to a fresh line.
func (e *Editor) finish(s *lineState) {
	s.pop = nil
	s.pos = len(s.buf)
	var b strings.Builder
	if s.rows > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", s.rows)
	}
	b.WriteString("\r\x1b[J")
	b.WriteString(strings.ReplaceAll(Echo(s.prompt, s.cont, s.shown(), e.t.Width()), "\n", "\r\n"))
	b.WriteString("\r\n")
	io.WriteString(e.t.Out, b.String())
	s.rows = 0
}

func (e *Editor) loadHistory() {
	if e.loaded {
		return
	}
	e.loaded = true
	if e.opts.HistoryPath == "" || e.opts.NoHistory {
		return
	}
	data, err := os.ReadFile(e.opts.HistoryPath)
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			e.history = append(e.history, unescapeHistory(l))
		}
	}
	if len(e.history) > e.opts.HistoryMax {
		e.history = e.history[len(e.history)-e.opts.HistoryMax:]
		// Rewrite the file so it does not grow without bound.
		var b strings.Builder
		for _, h := range e.history {
			b.WriteString(escapeHistory(h) + "\n")
		}
		tmp := e.opts.HistoryPath + ".tmp"
		if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil {
			os.Rename(tmp, e.opts.HistoryPath) //nolint:errcheck // history is best effort
		}
	}
}

// add records line in memory and appends it to the history file. Empty
// lines and repeats of the previous entry are skipped. Failures to write
// are ignored: history is a convenience, never a reason to stop.
func (e *Editor) add(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if n := len(e.history); n > 0 && e.history[n-1] == line {
		return
	}
	e.history = append(e.history, line)
	if len(e.history) > e.opts.HistoryMax {
		e.history = e.history[1:]
	}
	if e.opts.HistoryPath == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(e.opts.HistoryPath), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(e.opts.HistoryPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(escapeHistory(line) + "\n")
}

// History entries are one per line; a multi-line entry keeps its newlines
// as \n and backslashes as \\.
func escapeHistory(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", "").Replace(s)
}

func unescapeHistory(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
