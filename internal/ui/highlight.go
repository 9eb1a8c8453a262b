package ui

import (
	"embed"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// Syntax highlighting is chroma's (github.com/alecthomas/chroma/v2): its
// lexers, in harness's colours. Not chroma's lexers package: that one
// builds all of its ~280 lexers when the binary starts (86 ms on the
// 2-core test machine), and the binary also starts once per sandboxed
// command. The languages a coding session shows most are chroma's own
// definitions, copied verbatim into lexers/ (TestLexersAreChromas keeps
// them equal to the module's) and built on first use.

//go:embed lexers/*.xml
var lexerFiles embed.FS

// lexerRegistry holds the lexers, built the first time code is shown.
var lexerRegistry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, _ := fs.Glob(lexerFiles, "lexers/*.xml")
	for _, p := range paths {
		reg.Register(chroma.MustNewXMLLexer(lexerFiles, p))
	}
	reg.Register(chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
	}, goRules))
	return reg
})

// lexerFor finds the lexer for a fence's language ("go", "bash", "py") or
// a file name ("main.go", "Makefile"); nil when none fits.
func lexerFor(name string) chroma.Lexer {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	reg := lexerRegistry()
	base := path.Base(name)
	if l := reg.Match(base); l != nil { // a file name, as it is spelt
		return l
	}
	lower := strings.ToLower(base)
	if alias, ok := lexerAliases[lower]; ok {
		lower = alias
	}
	return reg.Get(lower) // a language, an alias or an extension
}

// lexerAliases are fence names models write that chroma's configs do not
// list.
var lexerAliases = map[string]string{
	"console": "bash", "shell-session": "bash", "jsonl": "json", "jsonc": "json",
	"jsx": "javascript", "tsx": "typescript", "dockerfile": "docker",
}

// Highlight colours code written in lang (a fence's info string such as
// "go" or "bash", or a file name). With colours off, or for a language no
// lexer knows, the text comes back unchanged apart from Sanitize.
func Highlight(st Style, lang, code string) string {
	code = Sanitize(code)
	if !st.Color || code == "" {
		return code
	}
	lexer := lexerFor(lang)
	if lexer == nil {
		return code
	}
	it, err := lexer.Tokenise(nil, code)
	if err != nil {
		return code
	}
	var b strings.Builder
	left := len(code) // lexers may add a final newline: not shown
	for tok := it(); tok != chroma.EOF && left > 0; tok = it() {
		v := tok.Value
		if len(v) > left {
			v = v[:left]
		}
		left -= len(v)
		if colour := tokenColour(st, tok.Type); colour != nil {
			b.WriteString(colourLines(colour, v))
		} else {
			b.WriteString(v)
		}
	}
	if StripANSI(b.String()) != code {
		return code // a lexer that rewrote the text: show it as it is
	}
	return b.String()
}

// tokenColour is harness's theme: keywords blue, constants and built-ins
// yellow, strings green, numbers magenta, variables cyan, comments dim;
// in a diff, added lines green and removed ones red.
func tokenColour(st Style, t chroma.TokenType) func(string) string {
	switch {
	case t == chroma.KeywordConstant || t == chroma.KeywordType || t.InSubCategory(chroma.NameBuiltin):
		return st.Yellow
	case t.InCategory(chroma.Keyword), t == chroma.NameTag:
		return st.Blue
	case t.InSubCategory(chroma.LiteralString):
		return st.Green
	case t.InSubCategory(chroma.LiteralNumber):
		return st.Magenta
	case t.InSubCategory(chroma.NameVariable):
		return st.Cyan
	case t.InCategory(chroma.Comment):
		return st.Dim
	case t == chroma.GenericInserted:
		return st.Green
	case t == chroma.GenericDeleted:
		return st.Red
	case t == chroma.GenericHeading, t == chroma.GenericSubheading:
		return st.Bold
	}
	return nil
}

func isIdent(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f
}

// colourLines applies f line by line so that every line of a multi-line
// token carries its own colour and reset (the renderer indents lines).
func colourLines(f func(string) string, s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		if p != "" {
			parts[i] = f(p)
		}
	}
	return strings.Join(parts, "\n")
}
