package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// Widths are a grapheme cluster's, as a terminal draws it.
func TestStringWidthClusters(t *testing.T) {
	tests := []struct {
		name, s string
		w       int
	}{
		{"ascii", "abc", 3},
		{"CJK", "日本語", 6},
		{"fullwidth", "ＡＢ", 4},
		{"combining mark", "cafe\u0301", 4},
		{"several marks", "a\u0301\u0323", 1},
		{"emoji", "🎉", 2},
		{"ZWJ family", "👩\u200d👩\u200d👧\u200d👦", 2},
		{"ZWJ profession", "👩\u200d💻", 2},
		{"flag", "🇯🇵", 2},
		{"two flags", "🇯🇵🇫🇷", 4},
		{"skin tone", "👍🏽", 2},
		{"styled", "\x1b[1m日本\x1b[0m", 4},
		{"text-style symbol", "⚙ bash", 6},
	}
	for _, tt := range tests {
		if got := StringWidth(tt.s); got != tt.w {
			t.Errorf("%s: StringWidth(%q) = %d, want %d", tt.name, tt.s, got, tt.w)
		}
	}
}

// Cutting text never splits a cluster: every cluster of the result is one
// of the input's.
func TestTruncateKeepsClusters(t *testing.T) {
	s := "ab👩\u200d👩\u200d👧\u200d👦🇯🇵e\u0301日本"
	whole := map[string]bool{}
	for _, c := range clusters(s) {
		whole[c] = true
	}
	for w := 0; w <= StringWidth(s)+1; w++ {
		for _, got := range []string{strings.TrimSuffix(Truncate(s, w), "…"), TruncateLeft(s, w)} {
			for _, c := range clusters(got) {
				if !whole[c] {
					t.Errorf("width %d: %q has the cut cluster %q", w, got, c)
				}
			}
		}
		if got := StringWidth(Truncate(s, w)); w > 0 && got > w {
			t.Errorf("Truncate(%d) is %d wide", w, got)
		}
	}
}

func clusters(s string) []string {
	var out []string
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		out = append(out, g.Str())
	}
	return out
}

// At 80 columns (and narrower), wrapping ends rows only where a break
// exists: no word is cut, no cluster split; rows fill up; a word wider
// than the row is the one thing cut.
func TestWrapNoMidWordCuts(t *testing.T) {
	para := "The edit-approval preview in internal/ui/preview.go shows https://example.com/a/long/path " +
		"and the --allow-net flag, emoji 👩\u200d👩\u200d👧\u200d👦 and 🇯🇵 flags, café with cafe\u0301 combining, " +
		"and 日本語のテキストは一文字が二列を占めます。 Then more prose follows to fill several rows at eighty columns."
	for _, width := range []int{80, 60, 40, 24} {
		for _, st := range []Style{{}, {Color: true}} {
			rows := wrapStyled(st.Bold("Note:")+" "+para, width)
			var got []string
			for i, r := range rows {
				plain := StripANSI(r)
				if w := StringWidth(plain); w > width {
					t.Errorf("width %d: row %d is %d wide: %q", width, i, w, plain)
				}
				got = append(got, plain)
			}
			joined := strings.Join(got, " ")
			for _, word := range strings.Fields(para) {
				if StringWidth(word) <= width && !strings.Contains(joined, word) && !strings.ContainsRune(word, '本') {
					t.Errorf("width %d: word %q was cut:\n%s", width, word, strings.Join(got, "\n"))
				}
			}
			// CJK may break between ideographs, but not before 。
			for _, r := range got {
				if strings.HasPrefix(r, "。") {
					t.Errorf("width %d: a row starts with closing punctuation: %q", width, r)
				}
			}
			// A row ends only where the next word would not fit.
			for i := 0; i+1 < len(got); i++ {
				next := strings.Fields(got[i+1])
				if len(next) > 0 && StringWidth(got[i])+1+StringWidth(next[0]) <= width && !strings.ContainsAny(next[0], "日本語。") {
					t.Errorf("width %d: row %d ends early: %q then %q", width, i, got[i], next[0])
				}
			}
			whole := map[string]bool{}
			for _, c := range clusters(StripANSI(st.Bold("Note:") + " " + para)) {
				whole[c] = true
			}
			for _, r := range got {
				for _, c := range clusters(r) {
					if !whole[c] {
						t.Errorf("width %d: cluster split: %q in %q", width, c, r)
					}
				}
			}
		}
	}
	// A word wider than the row is cut between clusters.
	long := strings.Repeat("👩\u200d💻", 12)
	for _, r := range wrapStyled(long, 10) {
		if StringWidth(r) > 10 || strings.Count(r, "\u200d") != strings.Count(r, "💻") {
			t.Errorf("long word row %q", r)
		}
	}
}

// The lexer definitions in lexers/ are chroma's own, unchanged: when
// chroma is upgraded, copy them again from the module (cp
// $(go list -m -f '{{.Dir}}' github.com/alecthomas/chroma/v2)/lexers/embedded/NAME.xml lexers/).
func TestLexersAreChromas(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("cannot find chroma's module directory (go mod download): %v", err)
	}
	files, _ := filepath.Glob("lexers/*.xml")
	if len(files) < 10 {
		t.Fatalf("only %d lexers in lexers/", len(files))
	}
	for _, f := range files {
		ours, _ := os.ReadFile(f)
		theirs, err := os.ReadFile(filepath.Join(dir, "lexers", "embedded", filepath.Base(f)))
		if err != nil || string(ours) != string(theirs) {
			t.Errorf("%s differs from chroma's (%v): copy it again", f, err)
		}
	}
	for _, name := range []string{"go", "bash", "sh", "python", "json", "javascript", "ts", "rust", "yaml", "diff", "c", "java", "Makefile", "Dockerfile", "x.toml", "main.go", "style.css", "/src/proj/Dockerfile", "/src/proj/GNUmakefile", "/a/b/run.SH", "jsonl", "console"} {
		if lexerFor(name) == nil {
			t.Errorf("no lexer for %q", name)
		}
	}
}
