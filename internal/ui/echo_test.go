package ui

import (
	"strings"
	"testing"
)

// TestEchoWrapsAtWords: an accepted prompt stays on screen wrapped at
// word boundaries under its text, never cut mid-word at the last column
// (the editing layout's rows), at any width; typed newlines start a row
// with the continuation mark.
func TestEchoWrapsAtWords(t *testing.T) {
	text := "please look at the configuration loader and tell me whether the environment variables documented in the readme are all honoured"
	for _, width := range []int{80, 60, 40, 24} {
		out := Echo("› ", "… ", []string{text, "and one more line"}, width)
		rows := strings.Split(out, "\n")
		var words []string
		for i, r := range rows {
			if w := StringWidth(r); w > width {
				t.Errorf("width %d: row %d is %d wide: %q", width, i, w, r)
			}
			if i > 0 && !strings.HasPrefix(r, "  ") && !strings.HasPrefix(r, "… ") {
				t.Errorf("width %d: row %d does not hang under the text: %q", width, i, r)
			}
			words = append(words, strings.Fields(strings.TrimPrefix(strings.TrimPrefix(r, "› "), "… "))...)
		}
		if got, want := strings.Join(words, " "), text+" and one more line"; got != want {
			t.Errorf("width %d: the words changed (a word was cut):\n got %q\nwant %q", width, got, want)
		}
		if !strings.Contains(out, "\n… and one more line") {
			t.Errorf("width %d: the typed newline does not start a row with the mark:\n%s", width, out)
		}
	}
}
