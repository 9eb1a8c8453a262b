package ui

import (
	"regexp"
	"strings"
	"sync"
)

// RenderMarkdown turns a model's Markdown reply into styled terminal text:
// headings, emphasis, inline code, lists, quotes, rules, tables and fenced
// code blocks with syntax highlighting, word-wrapped to width (a list item
// or quote keeps its indent on every row; a code line too long for the
// row continues on the next). Without colours the layout is the same,
// only the attributes are gone.
func RenderMarkdown(st Style, src string, width int) string {
	lines := strings.Split(strings.TrimRight(Sanitize(src), "\n"), "\n")
	var b strings.Builder
	for len(lines) > 0 {
		n, _ := nextBlock(lines, true)
		b.WriteString(renderBlock(st, lines[:n], width))
		lines = lines[n:]
	}
	return b.String()
}

// Block kinds, as nextBlock finds them.
const (
	blockBlank = iota
	blockPara
	blockHeading
	blockRule
	blockFence
	blockTable
	blockItem
	blockQuote
)

// blockKind says what kind of block lines[0] starts; table is only known
// once the separator line is there (more reports that it may still come).
func blockKind(lines []string) (kind int, more bool) {
	l := lines[0]
	t := strings.TrimLeft(l, " ")
	if t == "" || strings.TrimSpace(t) == "" {
		return blockBlank, false
	}
	// Most lines are prose: only a line starting with a mark can start
	// another block, so the patterns run only for those.
	if !strings.ContainsRune("`~#-*_+>|0123456789", rune(t[0])) {
		return blockPara, false
	}
	switch c := t[0]; {
	case (c == '`' || c == '~') && isFenceOpen(l):
		return blockFence, false
	case c == '#' && headingRe().MatchString(l):
		return blockHeading, false
	case (c == '-' || c == '*' || c == '_') && strings.Trim(t, "-*_ \t") == "" && ruleRe().MatchString(l):
		return blockRule, false
	case (c == '-' || c == '*' || c == '+') && bulletRe().MatchString(l):
		return blockItem, false
	case c >= '0' && c <= '9' && orderedRe().MatchString(l):
		return blockItem, false
	case c == '>':
		return blockQuote, false
	case c == '|' && isTableRow(l):
		if len(lines) < 2 {
			return blockPara, true
		}
		if tableSep().MatchString(lines[1]) {
			return blockTable, false
		}
	}
	return blockPara, false
}

func isFenceOpen(l string) bool { _, _, ok := openFence(l); return ok }

// nextBlock returns how many of lines (complete lines) make the block that
// starts at lines[0], and whether that block is complete: a later line
// shows it ended, or final says no more lines come. A streamed reply is
// rendered one complete block at a time.
func nextBlock(lines []string, final bool) (n int, done bool) {
	kind, more := blockKind(lines)
	if more && !final {
		return 1, false
	}
	switch kind {
	case blockBlank, blockHeading, blockRule:
		return 1, true
	case blockFence:
		fence, _, _ := openFence(lines[0])
		for i := 1; i < len(lines); i++ {
			if closesFence(lines[i], fence) {
				return i + 1, true
			}
		}
		return len(lines), final
	case blockTable:
		i := 2
		for i < len(lines) && isTableRow(lines[i]) {
			i++
		}
		return i, i < len(lines) || final
	case blockItem:
		// One item with its continuation and nested items: indented
		// lines, or unindented text that is not another block.
		i := 1
		for i < len(lines) {
			l := lines[i]
			if strings.TrimSpace(l) == "" {
				break
			}
			if leadingSpaces(l) == "" {
				if k, _ := blockKind(lines[i:]); k != blockPara {
					break
				}
			} else if isFenceOpen(l) {
				break
			}
			i++
		}
		return i, i < len(lines) || final
	case blockQuote:
		i := 1
		for i < len(lines) && quoteRe().MatchString(lines[i]) {
			i++
		}
		return i, i < len(lines) || final
	}
	i := 1
	for i < len(lines) {
		k, more := blockKind(lines[i:])
		if more && !final {
			return i, false // a table may start here
		}
		if k != blockPara {
			break
		}
		i++
	}
	return i, i < len(lines) || final
}

// renderBlock renders one block (lines as nextBlock cut them), each row
// ending in a newline.
func renderBlock(st Style, lines []string, width int) string {
	kind, _ := blockKind(lines)
	var out []string
	switch kind {
	case blockBlank:
		return "\n"
	case blockFence:
		fence, lang, _ := openFence(lines[0])
		code := lines[1:]
		if n := len(code); n > 0 && closesFence(code[n-1], fence) {
			code = code[:n-1]
		}
		indent := leadingSpaces(lines[0])
		out = append(out, fenceHead(st, indent, lang))
		for _, l := range strings.Split(Highlight(st, lang, strings.Join(code, "\n")), "\n") {
			out = append(out, codeRows(st, indent, l, width)...)
		}
		out = append(out, indent+st.Dim("╰"))
	case blockTable:
		out = renderTable(st, lines[0], lines[1], lines[2:], width)
	case blockItem:
		out = renderItem(st, lines, width)
	case blockQuote:
		var text []string
		for _, l := range lines {
			text = append(text, quoteRe().FindStringSubmatch(l)[1])
		}
		for _, row := range wrapStyled(st.Italic(renderInline(st, joinSoft(text))), width-2) {
			out = append(out, st.Dim("│ ")+row)
		}
	case blockHeading, blockRule:
		out = wrapStyled(renderLine(st, lines[0], width), width)
	default:
		out = wrapStyled(renderInline(st, joinSoft(lines)), width)
	}
	return strings.Join(out, "\n") + "\n"
}

func fenceHead(st Style, indent, lang string) string {
	if lang != "" {
		return indent + st.Dim("╭ "+lang)
	}
	return indent + st.Dim("╭")
}

// codeRows is one highlighted code line inside a fence's box, cut into
// rows of the width (code is never re-flowed at spaces).
func codeRows(st Style, indent, line string, width int) []string {
	prefix := indent + st.Dim("│ ")
	room := max(width-StringWidth(prefix), 8)
	var out []string
	for _, r := range cutStyled(line, room) {
		out = append(out, prefix+r)
	}
	return out
}

// joinSoft joins a paragraph's source lines: a line break inside a
// paragraph is a space, except a hard break (two trailing spaces or a
// backslash), which stays.
func joinSoft(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if i > 0 {
			prev := lines[i-1]
			if strings.HasSuffix(prev, "  ") || strings.HasSuffix(prev, "\\") {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		if i < len(lines)-1 {
			t = strings.TrimSuffix(t, "\\")
		}
		b.WriteString(t)
	}
	return b.String()
}

// renderItem renders a list item and the items nested in it, each wrapped
// with a hanging indent under its text.
func renderItem(st Style, lines []string, width int) []string {
	var out []string
	var head string
	var text []string
	flush := func() {
		if head == "" && len(text) == 0 {
			return
		}
		m := bulletRe().FindStringSubmatch(head)
		var prefix, body string
		if m != nil {
			prefix, body = m[1]+st.Cyan(bulletMark(m[2]))+" ", m[3]
		} else if m = orderedRe().FindStringSubmatch(head); m != nil {
			prefix, body = m[1]+st.Cyan(m[2])+" ", m[3]
		} else {
			body = strings.TrimSpace(head)
		}
		hang := strings.Repeat(" ", StringWidth(prefix))
		rows := wrapStyled(renderInline(st, joinSoft(append([]string{body}, text...))), width-len(hang))
		for i, r := range rows {
			if i == 0 {
				out = append(out, prefix+r)
			} else {
				out = append(out, hang+r)
			}
		}
		head, text = "", nil
	}
	for _, l := range lines {
		if bulletRe().MatchString(l) || orderedRe().MatchString(l) {
			flush()
			head = l
			continue
		}
		text = append(text, l)
	}
	flush()
	return out
}

// wrapStyled word-wraps styled text (SGR escapes allowed) to width
// columns. An attribute open at a row's end is closed there and reopened
// on the next row, so prefixes added to rows are never styled by
// accident. A word wider than the row is cut.
func wrapStyled(s string, width int) []string {
	width = max(width, 8)
	var out []string
	for _, para := range strings.Split(s, "\n") {
		out = append(out, wrapLine(para, width)...)
	}
	return out
}

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
			pieces := cutStyled(word.String(), width)
			for i, p := range pieces {
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
	walkStyled(s, func(seq, _ string) { word.WriteString(seq) }, func(c rune, active string) {
		if c == ' ' {
			putWord()
			sgrStart = active
			return
		}
		word.WriteRune(c)
		wordW += RuneWidth(c)
	})
	putWord()
	return out.done()
}

// styledRows collects rows of styled text. A row broken while attributes
// are open is closed with a reset and the next row opens them again.
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

// walkStyled goes through styled text: esc gets each escape sequence,
// char each other character; both get the SGR attributes in force after
// what was read.
func walkStyled(s string, esc func(seq, active string), char func(c rune, active string)) {
	active := ""
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == 0x1b {
			j := skipEscape(rs, i)
			seq := string(rs[i : j+1])
			active = applySGR(active, seq)
			esc(seq, active)
			i = j
			continue
		}
		char(rs[i], active)
	}
}

// bulletMark is the mark of a list item, given its task box ("[ ]",
// "[x]") or "" for a plain item.
func bulletMark(box string) string {
	switch strings.ToLower(strings.TrimSpace(box)) {
	case "[ ]":
		return "☐"
	case "[x]":
		return "☑"
	}
	return "•"
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

// cutStyled cuts styled text into rows of at most width columns, at any
// character, reopening the attributes in force on each new row.
func cutStyled(s string, width int) []string {
	width = max(width, 1)
	var out styledRows
	walkStyled(s, func(seq, _ string) { out.row.WriteString(seq) }, func(c rune, active string) {
		cw := RuneWidth(c)
		if out.w+cw > width && out.w > 0 {
			out.brk(active)
		}
		out.row.WriteRune(c)
		out.w += cw
	})
	return out.done()
}

var (
	headingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`) })
	ruleRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s{0,3}([-*_])(\s*([-*_])){2,}\s*$`) })
	bulletRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$`) })
	orderedRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)(\d+[.)])\s+(.*)$`) })
	quoteRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*>\s?(.*)$`) })
	tableSep  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`) })
)

func renderLine(st Style, line string, width int) string {
	if m := headingRe().FindStringSubmatch(line); m != nil {
		text := renderInline(st, m[2])
		switch len(m[1]) {
		case 1:
			return st.BoldCyan(st.Underline(StripANSI(text)))
		case 2:
			return st.BoldCyan(StripANSI(text))
		}
		return st.Bold(text)
	}
	if ruleRe().MatchString(line) {
		return st.Dim(strings.Repeat("─", min(width, 60)))
	}
	if m := bulletRe().FindStringSubmatch(line); m != nil {
		return m[1] + st.Cyan(bulletMark(m[2])) + " " + renderInline(st, m[3])
	}
	if m := orderedRe().FindStringSubmatch(line); m != nil {
		return m[1] + st.Cyan(m[2]) + " " + renderInline(st, m[3])
	}
	if m := quoteRe().FindStringSubmatch(line); m != nil {
		return st.Dim("│ ") + st.Italic(renderInline(st, m[1]))
	}
	if tableSep().MatchString(line) && strings.Contains(line, "|") {
		return st.Dim(line)
	}
	return renderInline(st, line)
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

// tableCells splits a table row at its pipes; an escaped pipe (\|) is
// part of its cell, in a code span too (as GFM has it).
func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, "\\|") {
		t = t[:len(t)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '\\' && i+1 < len(t) && t[i+1] == '|':
			cell.WriteByte('|')
			i++
		case c == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// renderTable lays out a Markdown table in width columns: header in bold,
// thin rules between columns, each column aligned as its delimiter says
// (":--:" centred, "--:" right). A table wider than width narrows its
// widest columns first, never below their longest word, and wraps their
// cells onto more rows; one too wide even then (many columns in a narrow
// window) is shown a record at a time, "header: value" per line.
// No row is ever wider than width.
func renderTable(st Style, header, sep string, rows []string, width int) []string {
	all := [][]string{tableCells(header)}
	for _, r := range rows {
		all = append(all, tableCells(r))
	}
	ncol := 0
	for _, r := range all {
		ncol = max(ncol, len(r))
	}
	align := make([]byte, ncol)
	for j, d := range tableCells(sep) {
		if j < ncol {
			switch {
			case strings.HasPrefix(d, ":") && strings.HasSuffix(d, ":"):
				align[j] = 'c'
			case strings.HasSuffix(d, ":"):
				align[j] = 'r'
			}
		}
	}
	rendered := make([][]string, len(all))
	widths := make([]int, ncol)
	words := make([]int, ncol) // the widest word of each column
	for i, r := range all {
		rendered[i] = make([]string, ncol)
		for j := range ncol {
			c := ""
			if j < len(r) {
				c = renderInline(st, r[j])
			}
			if i == 0 {
				c = st.Bold(c)
			}
			rendered[i][j] = c
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
		cells := make([][]string, ncol)
		height := 1
		for j, c := range r {
			cells[j] = []string{c}
			if StringWidth(c) > widths[j] {
				cells[j] = wrapLine(c, widths[j])
			}
			height = max(height, len(cells[j]))
		}
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
				switch align[j] {
				case 'r':
					left = pad
				case 'c':
					left = pad / 2
				}
				b.WriteString(strings.Repeat(" ", left) + c)
				if j < ncol-1 {
					b.WriteString(strings.Repeat(" ", pad-left))
				}
			}
			out = append(out, b.String())
		}
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
			out = append(out, wrapLine(name+st.Dim(":")+" "+c, width)...)
		}
	}
	return out
}

// openFence reports whether line opens a fenced code block, returning the
// fence (``` or ~~~, possibly longer) and the language.
func openFence(line string) (fence, lang string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return "", "", false
	}
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n] == c[0] {
			n++
		}
		if n >= 3 {
			info := strings.TrimSpace(t[n:])
			if c == "`" && strings.Contains(info, "`") {
				return "", "", false
			}
			if f := strings.Fields(info); len(f) > 0 {
				lang = f[0]
			}
			return t[:n], lang, true
		}
	}
	return "", "", false
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

func leadingSpaces(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " "))] }

// renderInline styles code spans, bold, italics and links in one line.
func renderInline(st Style, s string) string {
	var b strings.Builder
	rs := []rune(s)
	n := len(rs)
	for i := 0; i < n; i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < n && strings.ContainsRune("\\`*_[]()#+-.!<>|", rs[i+1]):
			b.WriteRune(rs[i+1])
			i++
			continue
		case r == '`':
			ticks := 1
			for i+ticks < n && rs[i+ticks] == '`' {
				ticks++
			}
			delim := strings.Repeat("`", ticks)
			rest := string(rs[i+ticks:])
			if k := strings.Index(rest, delim); k >= 0 {
				code := rest[:k]
				if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' {
					code = code[1 : len(code)-1]
				}
				b.WriteString(st.Cyan(code))
				i += ticks + len([]rune(rest[:k])) + ticks - 1
				continue
			}
		case (r == '*' || r == '_') && i+1 < n && rs[i+1] == r:
			delim := string([]rune{r, r})
			rest := string(rs[i+2:])
			if k := strings.Index(rest, delim); k > 0 && rest[0] != ' ' {
				b.WriteString(st.Bold(renderInline(st, rest[:k])))
				i += 2 + len([]rune(rest[:k])) + 1
				continue
			}
		case (r == '*' || r == '_') && i+1 < n && rs[i+1] != ' ' && (i == 0 || !isIdent(rs[i-1])):
			rest := string(rs[i+1:])
			if k := strings.IndexRune(rest, r); k > 0 && rest[k-1] != ' ' {
				after := []rune(rest[k+1:])
				if r == '*' || len(after) == 0 || !isIdent(after[0]) {
					b.WriteString(st.Italic(renderInline(st, rest[:k])))
					i += 1 + len([]rune(rest[:k]))
					continue
				}
			}
		case r == '[':
			if m := linkRe().FindStringSubmatch(string(rs[i:])); m != nil {
				text, url := m[1], m[2]
				b.WriteString(st.Underline(renderInline(st, text)))
				if url != text {
					b.WriteString(st.Dim(" (" + url + ")"))
				}
				i += len([]rune(m[0])) - 1
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

var linkRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([^\]]+)\]\(([^)\s]+)\)`) })
