package ui

import (
	"regexp"
	"strings"
)

// RenderMarkdown turns a model's Markdown reply into styled terminal text:
// headings, emphasis, inline code, lists, quotes, rules and fenced code
// blocks with syntax highlighting. Lines are not re-wrapped; the terminal
// wraps them. With colours off the source is returned as it is (sanitized):
// plain Markdown already reads well, and stripping its marks would lose
// information.
func RenderMarkdown(st Style, src string, width int) string {
	src = Sanitize(src)
	if !st.Color {
		return src
	}
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, lang, ok := openFence(line); ok {
			var code []string
			j := i + 1
			for ; j < len(lines); j++ {
				if closesFence(lines[j], fence) {
					break
				}
				code = append(code, lines[j])
			}
			indent := leadingSpaces(line)
			hl := Highlight(st, lang, strings.Join(code, "\n"))
			if lang != "" {
				out = append(out, indent+st.Dim("╭ "+lang))
			} else {
				out = append(out, indent+st.Dim("╭"))
			}
			for _, l := range strings.Split(hl, "\n") {
				out = append(out, indent+st.Dim("│ ")+l)
			}
			out = append(out, indent+st.Dim("╰"))
			i = j
			continue
		}
		if isTableRow(line) && i+1 < len(lines) && tableSep.MatchString(lines[i+1]) {
			j := i + 2
			for j < len(lines) && isTableRow(lines[j]) {
				j++
			}
			out = append(out, renderTable(st, lines[i], lines[i+2:j])...)
			i = j - 1
			continue
		}
		out = append(out, renderLine(st, line, width))
	}
	return strings.Join(out, "\n") + "\n"
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	ruleRe    = regexp.MustCompile(`^\s{0,3}([-*_])(\s*([-*_])){2,}\s*$`)
	bulletRe  = regexp.MustCompile(`^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$`)
	orderedRe = regexp.MustCompile(`^(\s*)(\d+[.)])\s+(.*)$`)
	quoteRe   = regexp.MustCompile(`^\s*>\s?(.*)$`)
	tableSep  = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
)

func renderLine(st Style, line string, width int) string {
	if m := headingRe.FindStringSubmatch(line); m != nil {
		text := renderInline(st, m[2])
		switch len(m[1]) {
		case 1:
			return st.BoldCyan(st.Underline(StripANSI(text)))
		case 2:
			return st.BoldCyan(StripANSI(text))
		}
		return st.Bold(text)
	}
	if ruleRe.MatchString(line) {
		return st.Dim(strings.Repeat("─", min(width, 60)))
	}
	if m := bulletRe.FindStringSubmatch(line); m != nil {
		mark := "•"
		switch strings.ToLower(strings.TrimSpace(m[2])) {
		case "[ ]":
			mark = "☐"
		case "[x]":
			mark = "☑"
		}
		return m[1] + st.Cyan(mark) + " " + renderInline(st, m[3])
	}
	if m := orderedRe.FindStringSubmatch(line); m != nil {
		return m[1] + st.Cyan(m[2]) + " " + renderInline(st, m[3])
	}
	if m := quoteRe.FindStringSubmatch(line); m != nil {
		return st.Dim("│ ") + st.Italic(renderInline(st, m[1]))
	}
	if tableSep.MatchString(line) && strings.Contains(line, "|") {
		return st.Dim(line)
	}
	return renderInline(st, line)
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	t = strings.TrimSuffix(t, "|")
	cells := strings.Split(t, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

// renderTable aligns a Markdown table's columns, header in bold, with thin
// rules between columns.
func renderTable(st Style, header string, rows []string) []string {
	all := [][]string{tableCells(header)}
	for _, r := range rows {
		all = append(all, tableCells(r))
	}
	ncol := 0
	for _, r := range all {
		ncol = max(ncol, len(r))
	}
	rendered := make([][]string, len(all))
	widths := make([]int, ncol)
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
		}
	}
	var out []string
	for i, r := range rendered {
		var b strings.Builder
		for j, c := range r {
			if j > 0 {
				b.WriteString(st.Dim(" │ "))
			}
			b.WriteString(c)
			if j < ncol-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-StringWidth(c)))
			}
		}
		out = append(out, b.String())
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
			if m := linkRe.FindStringSubmatch(string(rs[i:])); m != nil {
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

var linkRe = regexp.MustCompile(`^\[([^\]]+)\]\(([^)\s]+)\)`)
