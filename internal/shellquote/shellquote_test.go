package shellquote

import (
	"os/exec"
	"strings"
	"testing"
)

// TestQuoteRoundTrip: whatever a word holds, sh reads the quoted word back
// as exactly that word.
func TestQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"", "plain", "a b", "it's", "'", "''", `\`, "$(touch x)", "`id`", "a\nb", "*", "-n", "é\t\x01"}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	out, err := exec.Command(sh, "-c", `for w in `+strings.Join(quoted, " ")+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("sh read %d words, want %d: %q", len(got), len(words), got)
	}
	for i := range words {
		if got[i] != words[i] {
			t.Errorf("word %d: sh read %q, want %q", i, got[i], words[i])
		}
	}
}
