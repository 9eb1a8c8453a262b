package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A one-line change in a 500-line file is a one-line diff: the line out,
// the line in, two lines of context each side, numbered where they are.
func TestEditPreviewMinimalDiff(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "big.go")
	var src strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&src, "\tx%d := compute(%d) // line %d\n", i, i, i)
	}
	os.WriteFile(file, []byte(src.String()), 0o644)
	// The model's old_string spans three lines; only the middle one changes.
	in, _ := json.Marshal(map[string]any{
		"old_string": "\tx249 := compute(249) // line 249\n\tx250 := compute(250) // line 250\n\tx251 := compute(251) // line 251\n",
		"new_string": "\tx249 := compute(249) // line 249\n\tx250 := compute(2500) // line 250\n\tx251 := compute(251) // line 251\n",
	})
	pv := EditPreview(Style{}, file, in, 80, 30)
	want := []string{
		"-1 +1 lines",
		" 248       x248 := compute(248) // line 248",
		" 249       x249 := compute(249) // line 249",
		" 250 -     x250 := compute(250) // line 250",
		" 250 +     x250 := compute(2500) // line 250",
		" 251       x251 := compute(251) // line 251",
		" 252       x252 := compute(252) // line 252",
	}
	if got := StripANSI(strings.Join(pv.Short, "\n")); got != strings.Join(want, "\n") || pv.Full != nil {
		t.Errorf("got\n%s\nwant\n%s\n(full: %d rows)", got, strings.Join(want, "\n"), len(pv.Full))
	}
	// The prompt at 80x24 has six rows for it: the context shrinks, the
	// change stays in view, and v still shows it all.
	pv = EditPreview(Style{}, file, in, 80, 6)
	got := StripANSI(strings.Join(pv.Short, "\n"))
	if len(pv.Short) > 6 || !strings.Contains(got, " 250 -     x250 := compute(250)") || !strings.Contains(got, " 250 +     x250 := compute(2500)") || len(pv.Full) != 7 {
		t.Errorf("at 6 rows the change is not in view (%d rows, full %d):\n%s", len(pv.Short), len(pv.Full), got)
	}
	// With colours, the changed word is marked in the line changed in place.
	pv = EditPreview(Style{Color: true}, file, in, 80, 30)
	if got := strings.Join(pv.Short, "\n"); !strings.Contains(got, "compute(\x1b[7;31m250\x1b[0m)") || !strings.Contains(got, "compute(\x1b[7;32m2500\x1b[0m)") {
		t.Errorf("the changed word is not marked:\n%q", got)
	}
}

// Many changes far apart: each is a hunk of its own; cut to the rows
// given, the first change is in view and a row says how much is hidden
// and how to see it.
func TestEditPreviewLongDiffCut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	var src strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&src, "row %d\n", i)
	}
	os.WriteFile(file, []byte(src.String()), 0o644)
	in, _ := json.Marshal(map[string]any{"old_string": "row 1", "new_string": "ROW 1", "replace_all": true})
	pv := EditPreview(Style{}, file, in, 80, 8)
	got := StripANSI(strings.Join(pv.Short, "\n"))
	if len(pv.Short) != 8 || !strings.Contains(got, "   1 - row 1\n   1 + ROW 1") || !strings.Contains(got, "more rows (v shows the whole of it)") {
		t.Errorf("cut preview (%d rows):\n%s", len(pv.Short), got)
	}
	if !strings.Contains(strings.Join(pv.Full, "\n"), "ROW 199") {
		t.Errorf("Full lacks a later change")
	}
}

// A write over an existing file shows what changes, not the whole file.
func TestWritePreviewDiff(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644)
	in, _ := json.Marshal(map[string]any{"content": "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n"})
	got := StripANSI(strings.Join(WritePreview(Style{}, file, in, 60, 20).Short, "\n"))
	want := "replaces the existing file (7 lines) · 7 lines · 34 bytes\n   2   two\n   3   three\n   4 - four\n   4 + FOUR\n   5   five\n   6   six"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
