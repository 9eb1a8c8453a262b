package ui

import (
	"strings"
	"testing"
)

var colour = Style{Color: true}

// renderInline renders one paragraph's inline content.
func renderInline(st Style, s string) string {
	b := []byte(Sanitize(s))
	doc := parseMarkdown(b)
	if doc.FirstChild() == nil {
		return ""
	}
	return (&mdRenderer{st: st, src: b}).inline(doc.FirstChild())
}

func TestRenderInline(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a **bold** word", "a \x1b[1mbold\x1b[0m word"},
		{"use `go test` here", "use \x1b[36mgo test\x1b[0m here"},
		{"``a ` b``", "\x1b[36ma ` b\x1b[0m"},
		{"an *italic* one", "an \x1b[3mitalic\x1b[0m one"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"see [docs](https://x.dev)", "see \x1b[4mdocs\x1b[0m\x1b[2m (https://x.dev)\x1b[0m"},
		{`not \*emphasis\*`, "not *emphasis*"},
		{"unclosed `tick", "unclosed `tick"},
		{"**`code` in bold**", "\x1b[1m\x1b[36mcode\x1b[0m in bold\x1b[0m"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := renderInline(colour, tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderMarkdownBlocks(t *testing.T) {
	src := "# Title\n\nSome **bold** text.\n\n- one\n- [x] done\n  1. nested\n\n> quoted\n\n---\n\n```go\nfunc main() { // entry\n\treturn \"s\"\n}\n```\nafter\n"
	got := RenderMarkdown(colour, src, 40)
	plain := StripANSI(got)
	for _, want := range []string{"Title\n", "Some bold text.", "• one", "☑ done", "  1. nested", "│ quoted", strings.Repeat("─", 40),
		"╭ go", "│ func main() { // entry", "│     return \"s\"", "╰", "after"} {
		if !strings.Contains(plain, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, plain)
		}
	}
	for _, gone := range []string{"# Title", "**", "```", "- one"} {
		if strings.Contains(plain, gone) {
			t.Errorf("rendered text still has %q:\n%s", gone, plain)
		}
	}
	// Keywords, strings and comments are coloured inside the fence.
	for _, want := range []string{"\x1b[34mfunc\x1b[0m", "\x1b[32m\"s\"\x1b[0m", "\x1b[2m// entry\x1b[0m", "\x1b[34mreturn\x1b[0m"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered code lacks %q:\n%q", want, got)
		}
	}
}

// NO_COLOR drops the colours, not the layout: the marks are still
// rendered (bullets, table rules, code boxes), paragraphs still wrapped,
// and nothing a reply sends reaches the terminal unsanitized.
func TestRenderMarkdownNoColour(t *testing.T) {
	src := "# Title\n**b** `c`\n\x1b]0;pwned\x07ok\n\n- one two three four five six\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nx := 1\n```\n"
	got := RenderMarkdown(Style{}, src, 20)
	want := "Title\nb c ok\n\n• one two three four\n  five six\n\na │ b\n──┼──\n1 │ 2\n\n╭ go\n│ x := 1\n╰\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("escape codes without colour: %q", got)
	}
}

// Paragraphs, list items and quotes wrap at spaces to the width, with
// their indent on every row; code is cut, never re-flowed; styles do not
// leak into the next row's prefix.
func TestRenderMarkdownWraps(t *testing.T) {
	src := "It has one package and **a long bold phrase that wraps** over rows.\n\n" +
		"- an item whose text is long enough to wrap under itself\n  1. nested and long enough to wrap as well\n\n" +
		"> a quote that is long enough to wrap too\n\n```\n" + strings.Repeat("x", 50) + "\n```\n"
	for _, w := range []int{24, 40, 80} {
		got := RenderMarkdown(colour, src, w)
		for _, row := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
			if n := StringWidth(row); n > w {
				t.Errorf("width %d: row %q is %d wide", w, StripANSI(row), n)
			}
			if strings.Count(row, "\x1b[1m") > 0 && !strings.HasSuffix(row, "\x1b[0m") && !strings.Contains(row, "\x1b[0m") {
				t.Errorf("width %d: bold left open at the end of %q", w, row)
			}
		}
		plain := StripANSI(got)
		words := func(s string) int {
			n := 0
			for _, f := range strings.Fields(s) {
				if !strings.ContainsAny(f, "│╭╰") && !strings.HasPrefix(f, "xx") {
					n++
				}
			}
			return n
		}
		if words(plain) != words(StripANSI(RenderMarkdown(Style{}, src, 1000))) {
			t.Errorf("width %d: words lost:\n%s", w, plain)
		}
		if strings.Contains(plain, "on e package") || strings.Contains(plain, "pack\nage") {
			t.Errorf("width %d: a word was cut:\n%s", w, plain)
		}
	}
	got := StripANSI(RenderMarkdown(colour, src, 24))
	for _, want := range []string{"• an item whose text is\n  long enough to wrap\n", "  1. nested and long\n     enough to wrap as", "│ a quote that is long\n│ enough", "│ " + strings.Repeat("x", 22) + "\n│ xx"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}

// A block is complete when a later line shows it ended: that is what lets
// a streamed reply be rendered block by block. completeUpTo gets complete
// lines and says how many bytes of them hold complete blocks.
func TestCompleteUpTo(t *testing.T) {
	tests := []struct {
		src  string
		want string // the complete prefix
	}{
		{"para\nmore\n", ""},
		{"para\nmore\n\n", "para\nmore\n\n"}, // the blank line ends it
		{"para\n# head\n", "para\n# head\n"},
		{"# head\n", "# head\n"},
		{"---\n", "---\n"},
		{"para\n```go\nx\n", "para\n"}, // the fence streams on its own
		{"| a | b |\n", ""},            // a table or a paragraph: not known yet
		{"| a | b |\n|---|---|\n| 1 | 2 |\n", ""},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n"},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n\nafter\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n"},
		{"- one\n  cont\n- two\n", "- one\n  cont\n"}, // an item ends where the next starts
		{"- one\n  cont\n", ""},
		{"1. one\n\n2. two\n\n3. three\n", "1. one\n\n2. two\n\n"},
		{"> q\n> r\n\nx\n", "> q\n> r\n\n"},
		{"\n\n", "\n\n"},
	}
	for _, tt := range tests {
		if got := tt.src[:completeUpTo(tt.src)]; got != tt.want {
			t.Errorf("completeUpTo(%q) covers %q; want %q", tt.src, got, tt.want)
		}
	}
}

func TestRenderMarkdownUnclosedFence(t *testing.T) {
	got := StripANSI(RenderMarkdown(colour, "text\n```sh\necho hi\n", 80))
	if !strings.Contains(got, "│ echo hi") {
		t.Errorf("unclosed fence not rendered as code:\n%s", got)
	}
}

func TestHighlight(t *testing.T) {
	tests := []struct {
		lang, code string
		want       []string
	}{
		{"go", "x := `raw\nstr` /* multi\nline */ 42", []string{"\x1b[32m`raw\x1b[0m\n\x1b[32mstr`\x1b[0m", "\x1b[2m/* multi\x1b[0m\n\x1b[2mline */\x1b[0m", "\x1b[35m42\x1b[0m"}},
		{"bash", "echo \"$HOME\" # note\nls ${DIR}", []string{"\x1b[33mecho\x1b[0m", "\x1b[2m# note\x1b[0m", "\x1b[36m$HOME\x1b[0m", "\x1b[36mDIR\x1b[0m"}},
		{"bash", "echo a#b", []string{"a#b"}},
		{"python", "def f(): return None  # c", []string{"\x1b[34mdef\x1b[0m", "\x1b[33mNone\x1b[0m", "\x1b[2m# c\x1b[0m"}},
		{"json", `{"a": true, "n": 1.5, "s": "v"}`, []string{"\x1b[34m\"a\"\x1b[0m", "\x1b[33mtrue\x1b[0m", "\x1b[35m1.5\x1b[0m", "\x1b[32m\"v\"\x1b[0m"}},
		{"main.go", "package main", []string{"\x1b[34mpackage\x1b[0m"}}, // a file name picks the lexer
		{"rust", "fn main() { let x = 1; }", []string{"\x1b[34mfn\x1b[0m", "\x1b[34mlet\x1b[0m"}},
		{"nosuchlanguage", "if x", []string{"if x"}},
		{"", "if x", []string{"if x"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang+" "+tt.code, func(t *testing.T) {
			got := Highlight(colour, tt.lang, tt.code)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Highlight = %q, lacks %q", got, w)
				}
			}
			if StripANSI(got) != Sanitize(tt.code) {
				t.Errorf("highlighting changed the text: %q", StripANSI(got))
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\nline", "plain\nline"},
		{"a\tb", "a    b"},
		{"red \x1b[31mtext\x1b[0m", "red text"},
		{"title \x1b]0;owned\x07 done", "title  done"},
		{"osc st \x1b]8;;http://x\x1b\\link", "osc st link"},
		{"crlf\r\nline", "crlf\nline"},
		{"bell\x07 nul\x00", "bell nul"},
		{"c1 \u009b31m", "c1 31m"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStringWidth(t *testing.T) {
	tests := []struct {
		s string
		w int
	}{
		{"abc", 3}, {"世界", 4}, {"e\u0301", 1}, {"\x1b[1mbold\x1b[0m", 4}, {"⚙ bash", 6}, {"🎉", 2},
	}
	for _, tt := range tests {
		if got := StringWidth(tt.s); got != tt.w {
			t.Errorf("StringWidth(%q) = %d, want %d", tt.s, got, tt.w)
		}
	}
	if got := Truncate("hello world", 6); got != "hello…" {
		t.Errorf("Truncate = %q", got)
	}
}

func TestRenderMarkdownTable(t *testing.T) {
	// GFM: a table may follow a paragraph directly; only a blank line (or
	// another block) ends it, a line of text below it is one more row.
	src := "before\n| file | state |\n|---|:---:|\n| main.go | **fine** |\n| x | a longer cell |\n\nafter\n"
	got := StripANSI(RenderMarkdown(colour, src, 80))
	want := "before\nfile    │     state\n────────┼──────────────\nmain.go │     fine\nx       │ a longer cell\n\nafter\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A table wider than the window is laid out to fit it, whatever its
// shape: no row wider than the window, no word cut (narrowed columns
// wrap their cells at spaces; a table that cannot fit that way is shown a
// record at a time), every cell's words there, right-aligned numbers.
func TestRenderMarkdownWideTable(t *testing.T) {
	tables := map[string]string{
		"prose": "| package | what it does | lines | notes about the state of the package and what is left |\n|---|---|---:|---|\n" +
			"| internal/ui | terminal rendering, the line editor, the permission prompt and the spinner | 4200 | the renderer is the largest file and could be split |\n" +
			"| internal/cli | one file per command | 9000 | fine |\n",
		"many columns": "| a | b | c | d | e | f | g | h | i | j |\n|-|-|-|-|-|-|-|-|-|-|\n| alpha | beta | gamma | delta | epsilon | zeta | eta | theta | iota | kappa |\n",
		"wide chars":   "| 名前 | 説明 |\n| --- | --- |\n| 世界 | 世界 世界 世界 世界 世界 世界 世界 世界 世界 世界 世界 世界 世界 |\n",
		"escaped pipe": "| command | meaning |\n|---|---|\n| `a \\| b` | pipes a into b, which is a longer explanation that wraps |\n",
		"ragged":       "| one | two |\n|---|---|\n| only one cell |\n| three | cells | here, one too many |\n",
	}
	for name, src := range tables {
		// Every word of every cell, as the table drawn wide enough shows it.
		var words []string
		for _, f := range strings.Fields(RenderMarkdown(Style{}, src, 10000)) {
			if strings.Trim(f, "│─┼") != "" {
				words = append(words, f)
			}
		}
		for width := 16; width <= 140; width += 4 {
			got := StripANSI(RenderMarkdown(colour, src, width))
			for _, row := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
				if w := StringWidth(row); w > width {
					t.Errorf("%s at %d columns: a row is %d wide: %q", name, width, w, row)
				}
			}
			for _, w := range words {
				if StringWidth(w) <= width && !strings.Contains(got, w) {
					t.Errorf("%s at %d columns: the word %q is cut or lost:\n%s", name, width, w, got)
				}
			}
		}
	}
	got := StripANSI(RenderMarkdown(colour, tables["prose"], 120))
	if !strings.Contains(got, "│  4200 │") {
		t.Errorf("the number is not right-aligned:\n%s", got)
	}
	if got := StripANSI(RenderMarkdown(colour, tables["escaped pipe"], 80)); !strings.Contains(got, "a | b   │ pipes") {
		t.Errorf("an escaped pipe split its cell:\n%s", got)
	}
	if got := StripANSI(RenderMarkdown(colour, tables["prose"], 40)); !strings.Contains(got, "package: internal/ui\n") {
		t.Errorf("a table too wide for 40 columns is not shown as records:\n%s", got)
	}
}
