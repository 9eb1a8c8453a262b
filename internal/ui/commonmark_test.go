package ui

import "testing"

// Examples from the CommonMark spec (0.31.2) and the GFM spec, by number,
// where the hand-written renderer and the specification disagreed or a
// terminal renderer has to make a choice; rendered without colour at 40
// columns.
func TestRenderMarkdownSpecExamples(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"CM 350: intraword underscore is no emphasis", "foo_bar_\n", "foo_bar_\n"},
		{"CM 351: intraword star is", "*foo*bar\n", "foobar\n"},
		{"CM 384: strong inside emphasis", "*foo **bar** baz*\n", "foo bar baz\n"},
		{"CM 328: code span strips one space", "`` foo ` bar ``\n", "foo ` bar\n"},
		{"CM 12: backslash escapes", "\\*not emphasized*\n", "*not emphasized*\n"},
		{"CM 633: hard break, two spaces", "foo  \nbaz\n", "foo\nbaz\n"},
		{"CM 634: hard break, backslash", "foo\\\nbaz\n", "foo\nbaz\n"},
		{"CM 648: soft break", "foo\nbaz\n", "foo baz\n"},
		{"CM 80: setext heading", "Foo *bar*\n=========\n", "Foo bar\n"},
		{"CM 43: thematic break", "***\n", "────────────────────────────────────────\n"},
		{"CM 301: ordered list start", "3. a\n4. b\n", "3. a\n4. b\n"},
		{"CM 306: a list after a paragraph", "Foo\n- bar\n- baz\n", "Foo\n• bar\n• baz\n"},
		{"CM 119: fenced code keeps its text", "```\n<\n >\n```\n", "╭\n│ <\n│  >\n╰\n"},
		{"CM 482: inline link", "[link](/uri \"title\")\n", "link (/uri)\n"},
		{"CM 594: autolink", "<https://foo.bar.baz/test?q=hello>\n", "https://foo.bar.baz/test?q=hello\n"},
		{"CM 25: entities", "&copy; &amp; &#35;\n", "© & #\n"},
		{"entity naming a control is not sent raw", "a&#27;[2Jb\n", "a\\e[2Jb\n"},
		{"GFM 198: table", "| foo | bar |\n| --- | --- |\n| baz | bim |\n", "foo │ bar\n────┼────\nbaz │ bim\n"},
		{"GFM 491: strikethrough", "~~Hi~~ Hello\n", "~~Hi~~ Hello\n"},
		{"GFM 279: task list", "- [ ] foo\n- [x] bar\n", "☐ foo\n☑ bar\n"},
		{"GFM 622: extended autolink", "Visit www.commonmark.org/help today.\n", "Visit www.commonmark.org/help today.\n"},
	}
	for _, tt := range tests {
		if got := RenderMarkdown(Style{}, tt.src, 40); got != tt.want {
			t.Errorf("%s:\n%q\ngot  %q\nwant %q", tt.name, tt.src, got, tt.want)
		}
	}
}
