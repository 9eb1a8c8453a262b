package ui

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

// A reply is rendered as it streams, a completed block at a time: the
// parse of what has arrived says where blocks start, and a block is
// complete once another starts after it (an item of a list once the
// next item starts), or, for a paragraph, quote or table, once a blank
// line ends it; a heading or a rule once its line is there. Cutting only
// at those places renders the same as the whole reply does.

// completeUpTo is how much of src (complete lines) holds complete blocks,
// to be rendered now; the rest may still grow.
func completeUpTo(src string) int {
	b := []byte(src)
	doc := parseMarkdown(b)
	last := doc.LastChild()
	if last == nil {
		return len(src) // blank lines only
	}
	switch last.(type) {
	case *ast.Heading, *ast.ThematicBreak:
		return len(src)
	case *ast.Paragraph, *ast.Blockquote, *ast.HTMLBlock, *extast.Table:
		if endsBlank(src) {
			return len(src)
		}
	}
	cut := 0
	if last.PreviousSibling() != nil {
		cut = lineStart(b, blockStart(last))
	}
	if l, ok := last.(*ast.List); ok && l.LastChild() != l.FirstChild() {
		cut = lineStart(b, blockStart(l.LastChild()))
	}
	return cut
}

// endsBlank reports whether src ends with a blank line.
func endsBlank(src string) bool {
	t := strings.TrimRight(src, " ")
	return strings.HasSuffix(t, "\n\n") || t == "\n"
}

// lineStart is the start of the line holding offset p.
func lineStart(b []byte, p int) int {
	if p <= 0 {
		return 0
	}
	p = min(p, len(b))
	for p > 0 && b[p-1] != '\n' {
		p--
	}
	return p
}

// fenceOf is the fence (``` or ~~~, or longer) that opens a fenced code
// block on line.
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	n := 0
	for n < len(t) && t[n] == t[0] && (t[0] == '`' || t[0] == '~') {
		n++
	}
	return t[:n]
}

// closesFence reports whether line closes a block opened by fence: the
// same character, at least as many, indented at most three spaces and
// nothing after but spaces (CommonMark 4.5).
func closesFence(line, fence string) bool {
	if fence == "" || len(line)-len(strings.TrimLeft(line, " ")) > 3 {
		return false
	}
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// blockStart is where block n begins in the source: its own position or,
// for a node that has none (a table made from a paragraph), its first
// descendant's.
func blockStart(n ast.Node) int {
	if p := n.Pos(); p >= 0 {
		return p
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	if t, ok := n.(*ast.Text); ok {
		return t.Segment.Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if p := blockStart(c); p >= 0 {
			return p
		}
	}
	return -1
}
