package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"
)

func TestEditPreview(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	var src strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&src, "line %d\n", i)
	}
	os.WriteFile(file, []byte(src.String()), 0o644)
	in, _ := json.Marshal(map[string]any{"path": "main.go", "old_string": "line 10\nline 11\n", "new_string": "changed 10\n"})
	got := StripANSI(strings.Join(EditPreview(Style{}, file, in, 60, 30).Short, "\n"))
	want := "-2 +1 lines\n   8   line 8\n   9   line 9\n  10 - line 10\n  11 - line 11\n  10 + changed 10\n  11   line 12\n  12   line 13"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// replace_all: every place, numbered in the new file; the head counts
	// the lines the diff removes and adds.
	in, _ = json.Marshal(map[string]any{"path": "main.go", "old_string": "line 1", "new_string": "L1", "replace_all": true})
	if got := StripANSI(strings.Join(EditPreview(Style{}, file, in, 60, 200).Short, "\n")); !strings.Contains(got, "-11 +11 lines, 11 places") ||
		!strings.Contains(got, "   1 - line 1\n   1 + L1\n   2   line 2") || !strings.Contains(got, "  19 - line 19\n  10 + L10") || !strings.Contains(got, "  19 + L19\n  20   line 20") {
		t.Errorf("replace_all preview:\n%s", got)
	}
	// A long change is cut to the rows given, head and tail kept, Full whole.
	in, _ = json.Marshal(map[string]any{"path": "main.go", "old_string": "line 2\n", "new_string": strings.Repeat("new\n", 100)})
	pv := EditPreview(Style{}, file, in, 60, 12)
	if len(pv.Short) != 12 || len(pv.Full) < 100 || !strings.Contains(strings.Join(pv.Short, "\n"), "more rows (v shows the whole of it)") {
		t.Errorf("cut preview: %d rows short, %d full:\n%s", len(pv.Short), len(pv.Full), strings.Join(pv.Short, "\n"))
	}
	// Syntax colour where cheap.
	if got := strings.Join(EditPreview(colour, "/nonexistent/x.go", []byte(`{"old_string":"a","new_string":"func f() {}"}`), 60, 10).Short, "\n"); !strings.Contains(got, "\x1b[34mfunc\x1b[0m") {
		t.Errorf("no highlighting: %q", got)
	}
}

func TestWritePreview(t *testing.T) {
	dir := t.TempDir()
	var content strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&content, "row %d\n", i)
	}
	in, _ := json.Marshal(map[string]any{"path": "new.txt", "content": content.String()})
	pv := WritePreview(Style{}, filepath.Join(dir, "new.txt"), in, 60, 10)
	got := StripANSI(strings.Join(pv.Short, "\n"))
	for _, want := range []string{"new file · 60 lines · 411 bytes", "   1 + row 1", "more rows", "  60 + row 60"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("a\nb\n"), 0o644)
	in, _ = json.Marshal(map[string]any{"path": "old.txt", "content": "x\n"})
	if got := StripANSI(WritePreview(Style{}, filepath.Join(dir, "old.txt"), in, 60, 10).Short[0]); got != "replaces the existing file (2 lines) · 1 line · 2 bytes" {
		t.Errorf("head = %q", got)
	}
}

func TestAskingParts(t *testing.T) {
	tests := []struct{ cmd, pats, want string }{
		{"cd x && go test ./... | tee out", "go test *", "go test ./..."},
		{"ls; make build && make deploy", "make deploy", "make deploy"},
		{"a && b", "", ""},
		{"/usr/bin/touch f", "touch f", "/usr/bin/touch f"},
	}
	for _, tt := range tests {
		if got := strings.Join(AskingParts(tt.cmd, tt.pats), "|"); got != tt.want {
			t.Errorf("AskingParts(%q, %q) = %q, want %q", tt.cmd, tt.pats, got, tt.want)
		}
	}
}

// The edit prompt shows the diff inside the box, before anything is
// written.
func TestPrompterShowsEdit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("one\ntwo\nthree\n"), 0o644)
	scr := newScreen(80, 30)
	tm := &Term{Out: scr, TTY: true, Size: func() (int, int) { return 80, 30 }}
	r := NewRenderer(tm, nil)
	defer r.Close()
	call := llm.Block{Type: llm.BlockToolUse, ID: "c1", Name: "edit_file", Input: json.RawMessage(`{"path":"a.txt","old_string":"two\n","new_string":"TWO\n"}`)}
	r.OnToolStart(call)
	p := &Prompter{R: r, Editor: NewEditor(NewInput(strings.NewReader("y\r")), tm, EditorOptions{ForceRaw: true, NoHistory: true})}
	ans, err := p.Prompt(context.Background(), permission.Request{Tool: "edit_file", Path: file, Write: true}, permission.Decision{Verdict: permission.Ask, Rule: "default: ask"}, "a.txt")
	if err != nil || ans.Choice != permission.Yes {
		t.Fatalf("answer %+v, %v", ans, err)
	}
	got := scr.all()
	for _, want := range []string{"╭ permission  edit a file", "│    1   one", "│    2 - two", "│    2 + TWO", "│    3   three", "╰ allow?"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("the preview changed the file: %q", b)
	}
}

// A compound command's prompt shows the parsed command with the part that
// needs approval standing out and the rest dimmed; a simple one is shown
// with its syntax colours.
func TestPrompterMarksAskingPart(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := permission.New(permission.Options{Policy: pol, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	st := Style{Color: true}
	mark := func(x string) string { return st.Bold(st.Yellow(st.Underline(x))) }
	tests := []struct {
		cmd       string
		marked    []string
		notMarked []string
	}{
		{"cd sub && make deploy | tee log", []string{"make deploy"}, []string{"tee log", "cd sub"}},
		{"git status && npm install left-pad; echo done", []string{"npm install left-pad"}, []string{"echo done", "git status"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			req := permission.Request{Tool: "bash", Command: tt.cmd}
			d := gate.Decide(req)
			if d.Verdict != permission.Ask {
				t.Fatalf("the default rules do not ask for %q (verdict %v): pick a command that asks", tt.cmd, d.Verdict)
			}
			var out strings.Builder
			tm := &Term{Out: &out, TTY: true, Style: st, Size: func() (int, int) { return 100, 30 }}
			r := NewRenderer(tm, nil)
			defer r.Close()
			p := &Prompter{R: r, Editor: NewEditor(NewInput(strings.NewReader("n\r")), tm, EditorOptions{ForceRaw: true, NoHistory: true})}
			if _, err := p.Prompt(context.Background(), req, d, tt.cmd); err != nil {
				t.Fatal(err)
			}
			for _, m := range tt.marked {
				if !strings.Contains(out.String(), mark(m)) {
					t.Errorf("the asking part %q is not marked (pattern %q):\n%q", m, d.Pattern(), out.String())
				}
			}
			for _, m := range tt.notMarked {
				if strings.Contains(out.String(), mark(m)) {
					t.Errorf("%q is marked, but it does not ask", m)
				}
			}
		})
	}
}
