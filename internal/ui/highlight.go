package ui

import (
	"strings"
	"sync"
	"unicode"
)

// A deliberately small highlighter: keywords, strings, comments and numbers
// for the languages a coding session shows most. It lexes a whole block at
// once so block comments and multi-line strings stay coloured.

type langSpec struct {
	keywords     map[string]bool
	builtins     map[string]bool
	lineComments []string
	blockComment [2]string // two-character delimiters
	backtick     bool      // `raw strings` (Go) or command substitution (shell)
	variables    bool      // $VAR (shell)
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// langs are the languages Highlight knows, built on first use rather
// than at init (every start of the binary would pay for the word maps).
var langs = sync.OnceValue(func() langSet {
	return langSet{
		golang: &langSpec{
			keywords: words(`break case chan const continue default defer else fallthrough for func go goto if
				import interface map package range return select struct switch type var`),
			builtins: words(`nil true false iota append cap clear close complex copy delete imag len make max min
				new panic print println real recover any bool byte comparable complex64 complex128 error float32
				float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr`),
			lineComments: []string{"//"},
			blockComment: [2]string{"/*", "*/"},
			backtick:     true,
		},
		sh: &langSpec{
			keywords: words(`if then else elif fi for while until do done case esac in function select return
				export local readonly set unset shift exit`),
			builtins: words(`cd echo printf test source alias eval exec read trap wait true false
				go git make grep sed awk find ls cat rm mv cp mkdir npm python python3 pip curl`),
			lineComments: []string{"#"},
			backtick:     true,
			variables:    true,
		},
		py: &langSpec{
			keywords: words(`and as assert async await break class continue def del elif else except finally for
				from global if import in is lambda nonlocal not or pass raise return try while with yield match case`),
			builtins:     words(`None True False self print len range str int float list dict set tuple open isinstance super`),
			lineComments: []string{"#"},
		},
		json: &langSpec{
			builtins: words(`true false null`),
		},
		js: &langSpec{
			keywords: words(`break case catch class const continue default delete do else export extends finally for
				function if import in instanceof let new return super switch this throw try typeof var void while yield
				async await of from interface type`),
			builtins:     words(`true false null undefined console`),
			lineComments: []string{"//"},
			blockComment: [2]string{"/*", "*/"},
			backtick:     true,
		},
		plain: &langSpec{},
	}
})

type langSet struct{ golang, sh, py, json, js, plain *langSpec }

func langFor(name string) *langSpec {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "go", "golang":
		return langs().golang
	case "sh", "bash", "shell", "zsh", "console", "shell-session":
		return langs().sh
	case "py", "python", "python3":
		return langs().py
	case "json", "jsonl", "jsonc":
		return langs().json
	case "js", "javascript", "ts", "typescript", "tsx", "jsx":
		return langs().js
	}
	return langs().plain
}

// Highlight colours code written in lang (a fence's info string such as
// "go" or "bash"). With colours off, or for an unknown language's
// keywords, the text comes back unchanged apart from Sanitize.
func Highlight(st Style, lang, code string) string {
	code = Sanitize(code)
	if !st.Color {
		return code
	}
	spec := langFor(lang)
	var b strings.Builder
	rs := []rune(code)
	n := len(rs)
	hasAt := func(i int, s string) bool { // s is ASCII
		return i+len(s) <= n && string(rs[i:i+len(s)]) == s
	}
	for i := 0; i < n; {
		r := rs[i]
		// Comments.
		if c := spec.blockComment; c[0] != "" && hasAt(i, c[0]) {
			j := n
			if k := strings.Index(string(rs[i+2:]), c[1]); k >= 0 {
				j = i + 2 + len([]rune(string(rs[i+2:])[:k])) + 2
			}
			b.WriteString(colourLines(st.Dim, string(rs[i:j])))
			i = j
			continue
		}
		lineComment := false
		for _, lc := range spec.lineComments {
			// In shell, # starts a comment only at a word start.
			if hasAt(i, lc) && (lc != "#" || i == 0 || unicode.IsSpace(rs[i-1])) {
				lineComment = true
			}
		}
		if lineComment {
			j := i
			for j < n && rs[j] != '\n' {
				j++
			}
			b.WriteString(st.Dim(string(rs[i:j])))
			i = j
			continue
		}
		// Strings.
		if r == '"' || r == '\'' || (r == '`' && spec.backtick) {
			j := i + 1
			for j < n && rs[j] != r {
				if rs[j] == '\\' && r != '`' {
					j++
					if j >= n { // a backslash ends the text: the string is unclosed
						break
					}
				}
				if rs[j] == '\n' && r != '`' && spec != langs().py {
					break
				}
				j++
			}
			j = min(j+1, n)
			b.WriteString(colourLines(st.Green, string(rs[i:j])))
			i = j
			continue
		}
		if spec.variables && r == '$' && i+1 < n && (isIdent(rs[i+1]) || rs[i+1] == '{') {
			j := i + 1
			if rs[j] == '{' {
				for j < n && rs[j] != '}' && rs[j] != '\n' {
					j++
				}
				j = min(j+1, n)
			} else {
				for j < n && isIdent(rs[j]) {
					j++
				}
			}
			b.WriteString(st.Cyan(string(rs[i:j])))
			i = j
			continue
		}
		if unicode.IsDigit(r) && (i == 0 || !isIdent(rs[i-1])) {
			j := i
			for j < n && (isIdent(rs[j]) || rs[j] == '.') {
				j++
			}
			b.WriteString(st.Magenta(string(rs[i:j])))
			i = j
			continue
		}
		if isIdent(r) {
			j := i
			for j < n && (isIdent(rs[j]) || (spec == langs().sh && rs[j] == '-')) {
				j++
			}
			w := string(rs[i:j])
			switch {
			case spec.keywords[w]:
				b.WriteString(st.Blue(w))
			case spec.builtins[w]:
				b.WriteString(st.Yellow(w))
			default:
				b.WriteString(w)
			}
			i = j
			continue
		}
		b.WriteRune(r)
		i++
	}
	return b.String()
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// colourLines applies f line by line so that every line of a multi-line
// token carries its own colour and reset (the renderer indents lines).
func colourLines(f func(string) string, s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = f(p)
	}
	return strings.Join(parts, "\n")
}
