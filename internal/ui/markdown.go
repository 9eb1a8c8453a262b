package ui

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Markdown is parsed by goldmark (CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks) and drawn by harness's own
// small renderer over its syntax tree: the terminal look below is ours,
// the grammar is the specification's.

// markdownParser is built once: goldmark's parser keeps no state between
// documents.
var markdownParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()
})

// parseMarkdown parses sanitized source.
func parseMarkdown(src []byte) ast.Node {
	return markdownParser().Parse(text.NewReader(src))
}

// RenderMarkdown turns a model's Markdown reply into styled terminal text:
// headings, emphasis, inline code, lists, quotes, rules, tables and fenced
// code blocks with syntax highlighting, word-wrapped to width (a list item
// or quote keeps its indent on every row; a code line too long for the
// row continues on the next). Without colours the layout is the same,
// only the attributes are gone. Every row ends in a newline.
func RenderMarkdown(st Style, src string, width int) string {
	b := []byte(Sanitize(src))
	rows := (&mdRenderer{st: st, src: b}).blocks(parseMarkdown(b), width)
	if len(rows) == 0 {
		return ""
	}
	return strings.Join(rows, "\n") + "\n"
}

// mdRenderer draws one document's tree.
type mdRenderer struct {
	st    Style
	src   []byte
	quote int // depth of block quotes around what is drawn
}

// blocks draws the block children of parent, a blank row where the source
// had blank lines between two of them.
func (m *mdRenderer) blocks(parent ast.Node, width int) []string {
	var out []string
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if n != parent.FirstChild() && m.blankBefore(n) {
			out = append(out, "")
		}
		out = append(out, m.block(n, width)...)
	}
	return out
}

// blankBefore reports whether a blank line comes before block n. A table
// is made from a paragraph after parsing and does not carry the flag: the
// source says.
func (m *mdRenderer) blankBefore(n ast.Node) bool {
	if n.HasBlankPreviousLines() {
		return true
	}
	if _, ok := n.(*extast.Table); ok {
		before := bytes.TrimRight(m.src[:lineStart(m.src, blockStart(n))], " ")
		return bytes.HasSuffix(before, []byte("\n\n"))
	}
	return false
}

// block draws one block as rows of at most width columns.
func (m *mdRenderer) block(n ast.Node, width int) []string {
	st := m.st
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		t := m.inline(n)
		if m.quote > 0 {
			t = st.Italic(t)
		}
		return wrapStyled(t, width)
	case *ast.Heading:
		return wrapStyled(m.heading(n), width)
	case *ast.ThematicBreak:
		return []string{st.Dim(strings.Repeat("─", min(max(width, 1), 60)))}
	case *ast.FencedCodeBlock:
		return m.code(n, string(n.Language(m.src)), width)
	case *ast.CodeBlock:
		return m.code(n, "", width)
	case *ast.Blockquote:
		m.quote++
		rows := m.blocks(n, width-2)
		m.quote--
		for i, r := range rows {
			rows[i] = st.Dim("│ ") + r
		}
		return rows
	case *ast.List:
		return m.list(n, width)
	case *extast.Table:
		return m.table(n, width)
	case *ast.HTMLBlock:
		var rows []string
		for _, l := range m.lines(n) {
			rows = append(rows, cutStyled(l, max(width, 1))...)
		}
		return rows
	}
	return wrapStyled(m.inline(n), width)
}

func (m *mdRenderer) heading(n *ast.Heading) string {
	st := m.st
	t := m.inline(n)
	switch n.Level {
	case 1:
		return st.BoldCyan(st.Underline(StripANSI(t)))
	case 2:
		return st.BoldCyan(StripANSI(t))
	}
	return st.Bold(t)
}

// lines is the source of a block's lines, without their line ends.
func (m *mdRenderer) lines(n ast.Node) []string {
	ls := n.Lines()
	out := make([]string, 0, ls.Len())
	for i := range ls.Len() {
		seg := ls.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(m.src)), "\n"))
	}
	return out
}

// code draws a code block in its box, highlighted as lang.
func (m *mdRenderer) code(n ast.Node, lang string, width int) []string {
	out := []string{fenceHead(m.st, lang)}
	if body := m.lines(n); len(body) > 0 {
		for _, l := range strings.Split(Highlight(m.st, lang, strings.Join(body, "\n")), "\n") {
			out = append(out, codeRows(m.st, l, width)...)
		}
	}
	return append(out, m.st.Dim("╰"))
}

func fenceHead(st Style, lang string) string {
	if lang != "" {
		return st.Dim("╭ " + lang)
	}
	return st.Dim("╭")
}

// codeRows is one highlighted code line inside a fence's box, cut into
// rows of the width (code is never re-flowed at spaces).
func codeRows(st Style, line string, width int) []string {
	prefix := st.Dim("│ ")
	var out []string
	for _, r := range cutStyled(line, max(width-2, 8)) {
		out = append(out, prefix+r)
	}
	return out
}

// list draws a list's items, each with a hanging indent under its text:
// a bullet, a task box or the item's number.
func (m *mdRenderer) list(n *ast.List, width int) []string {
	var out []string
	num := n.Start
	for it := n.FirstChild(); it != nil; it = it.NextSibling() {
		if it != n.FirstChild() && it.HasBlankPreviousLines() {
			out = append(out, "")
		}
		mark := "•"
		if n.IsOrdered() {
			mark = strconv.Itoa(num) + string(n.Marker)
			num++
		}
		if box := taskBox(it); box != nil {
			mark = "☐"
			if box.IsChecked {
				mark = "☑"
			}
		}
		hang := StringWidth(mark) + 1
		rows := m.blocks(it, width-hang)
		if len(rows) == 0 {
			rows = []string{""}
		}
		pad := strings.Repeat(" ", hang)
		for i, r := range rows {
			switch {
			case i == 0:
				rows[i] = m.st.Cyan(mark) + " " + r
			case r != "":
				rows[i] = pad + r
			}
		}
		out = append(out, rows...)
	}
	return out
}

// taskBox is the [ ] or [x] that starts a task list item.
func taskBox(item ast.Node) *extast.TaskCheckBox {
	if p := item.FirstChild(); p != nil {
		if box, ok := p.FirstChild().(*extast.TaskCheckBox); ok {
			return box
		}
	}
	return nil
}

// inline draws the inline children of n as one styled string; a hard
// line break is a newline.
func (m *mdRenderer) inline(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		m.inlineNode(&b, c)
	}
	return b.String()
}

func (m *mdRenderer) inlineNode(b *strings.Builder, n ast.Node) {
	st := m.st
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(m.src)
		if n.HardLineBreak() {
			v = bytes.TrimRight(bytes.TrimSuffix(v, []byte(`\`)), " ")
		}
		b.WriteString(m.plain(v, n.IsRaw()))
		switch {
		case n.HardLineBreak():
			b.WriteString("\n")
		case n.SoftLineBreak():
			b.WriteString(" ")
		}
	case *ast.String:
		b.WriteString(m.plain(n.Value, n.IsRaw() || n.IsCode()))
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				code.WriteString(strings.ReplaceAll(string(t.Segment.Value(m.src)), "\n", " "))
			} else if s, ok := c.(*ast.String); ok {
				code.Write(s.Value)
			}
		}
		b.WriteString(st.Cyan(code.String()))
	case *ast.Emphasis:
		if n.Level >= 2 {
			b.WriteString(st.Bold(m.inline(n)))
		} else {
			b.WriteString(st.Italic(m.inline(n)))
		}
	case *ast.Link:
		m.link(b, m.inline(n), m.plain(n.Destination, false))
	case *ast.Image:
		m.link(b, m.inline(n), m.plain(n.Destination, false))
	case *ast.AutoLink:
		b.WriteString(st.Underline(m.plain(n.Label(m.src), true)))
	case *extast.Strikethrough:
		if st.Color {
			b.WriteString(st.sgr("9", m.inline(n)))
		} else {
			b.WriteString("~~" + m.inline(n) + "~~") // struck out, not gone
		}
	case *extast.TaskCheckBox:
		// Drawn as the item's mark.
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			b.WriteString(m.plain(seg.Value(m.src), true))
		}
	default:
		b.WriteString(m.inline(n))
	}
}

// link draws a link's text underlined, with its address after it unless
// the text is the address.
func (m *mdRenderer) link(b *strings.Builder, label, url string) {
	b.WriteString(m.st.Underline(label))
	if url != "" && url != StripANSI(label) {
		b.WriteString(m.st.Dim(" (" + url + ")"))
	}
}

// plain is source text as shown: backslash escapes and entities resolved
// (unless raw), and sanitized again, since an entity can name a control
// character.
func (m *mdRenderer) plain(v []byte, raw bool) string {
	if !raw {
		v = util.UnescapePunctuations(v)
		if bytes.IndexByte(v, '&') >= 0 {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(v))
			return SanitizeLine(string(v))
		}
	}
	return string(v)
}
