package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/markdown")

// TestRenderMarkdownGolden renders each testdata/markdown/*.md at 80 and
// 40 columns, with and without colours, against its golden file (escape
// bytes written as ⎋ so the file reads). go test -run Golden -update
// rewrites them; read the diff before committing one.
func TestRenderMarkdownGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/markdown/*.md")
	if len(files) == 0 {
		t.Fatal("no testdata/markdown/*.md")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, width := range []int{80, 40} {
			for _, st := range []Style{{}, {Color: true}} {
				out := RenderMarkdown(st, string(src), width)
				for _, row := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if w := StringWidth(row); w > width {
						t.Errorf("%s at %d: row %q is %d wide", f, width, StripANSI(row), w)
					}
				}
				fmt.Fprintf(&b, "======== width %d colour %v\n", width, st.Color)
				b.WriteString(strings.ReplaceAll(out, "\x1b", "⎋"))
			}
		}
		golden := strings.TrimSuffix(f, ".md") + ".golden"
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run Golden -update writes it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s: rendering differs from %s (go test -run Golden -update rewrites it):\n%s", f, golden, b.String())
		}
	}
}

// A reply streamed in small pieces ends on screen exactly as its whole
// rendering: the stream cuts only where blocks are complete.
func TestStreamedMarkdownMatchesWhole(t *testing.T) {
	files, _ := filepath.Glob("testdata/markdown/*.md")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		for _, width := range []int{80, 40} {
			r, scr := testRenderer(width, 200, false)
			r.StartTurn()
			s := string(src)
			for i := 0; s != ""; i++ {
				n := min(len(s), 2+i%7)
				for !utf8.ValidString(s[:n]) {
					n++
				}
				stream(r, s[:n])
				s = s[n:]
			}
			r.OnReply(reply(string(src), llm.Usage{}))
			r.EndTurn(false)
			r.Close()
			// The whole rendering, drawn on the same kind of screen.
			whole := newScreen(width, 200)
			whole.Write([]byte(RenderMarkdown(Style{}, string(src), width)))
			got, want := strings.TrimSpace(scr.all()), strings.TrimSpace(whole.all())
			if got != want {
				t.Errorf("%s at %d: streamed\n%s\nwhole\n%s", f, width, got, want)
			}
		}
	}
}
