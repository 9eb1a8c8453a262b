package ui

import (
	"strings"
	"testing"
)

func TestFit(t *testing.T) {
	st := Style{Color: true}
	tests := []struct {
		name, in string
		width    int
		want     []string // the rows, plain
	}{
		{"fits", "short line", 20, []string{"short line"}},
		{"words", "one two three four five six", 12, []string{"one two", "three four", "five six"}},
		{"hangs under the text column", "  /compact [focus]  summarise the conversation now, keeping what matters for focus", 50,
			[]string{"  /compact [focus]  summarise the conversation", "                    now, keeping what matters for", "                    focus"}},
		{"indent", "    an indented sentence that is long", 20, []string{"    an indented", "    sentence that is", "    long"}},
		{"styled", st.Red("error: ") + "the base URL does not answer, right?", 20, []string{"error: the base URL", "does not answer,", "right?"}},
		{"a long word is cut", "xxxxxxxxxxxxxxxxxxxxxxxxx", 10, []string{"xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Split(StripANSI(Fit(tt.in, tt.width)), "\n")
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Fit(%q, %d) =\n%s\nwant\n%s", tt.in, tt.width, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, r := range strings.Split(Fit(tt.in, tt.width), "\n") {
				if StringWidth(r) > tt.width {
					t.Errorf("row wider than %d: %q", tt.width, r)
				}
			}
		})
	}
}

func TestTruncateWords(t *testing.T) {
	for in, want := range map[string]string{
		"fix the parser for nested quotes": "fix the parser…",
		"short":                            "short",
		"averyveryverylongword and more":   "averyveryveryl…",
	} {
		if got := TruncateWords(in, 15); got != want {
			t.Errorf("TruncateWords(%q) = %q, want %q", in, got, want)
		}
	}
}
