package ui

import (
	"fmt"
	"strings"
	"testing"
)

// TestChangedInView: a preview too long for the rows left keeps its
// changed rows in view (not the head and tail of the diff), says how
// many rows are above and below, and never takes more than n rows.
func TestChangedInView(t *testing.T) {
	st := Style{}
	ctx := func(n int) string { return fmt.Sprintf("%4d   context %d", n, n) }
	var all []string
	all = append(all, "-1 +1 lines")
	for i := 1; i <= 10; i++ {
		all = append(all, ctx(i))
	}
	all = append(all, "  11 - old eleven", "       the rest of old eleven", "  11 + NEW eleven")
	for i := 12; i <= 20; i++ {
		all = append(all, ctx(i))
	}
	tests := []struct {
		n          int
		want, lack []string
	}{
		{6, []string{"old eleven", "the rest of old eleven", "NEW eleven", "rows above not shown", "more rows (v shows"}, []string{"context 1\n"}},
		{10, []string{"context 9", "old eleven", "NEW eleven", "context 12"}, []string{"context 1\n"}},
		{3, []string{"old eleven"}, nil},
	}
	for _, tt := range tests {
		got := changedInView(st, all, tt.n)
		text := strings.Join(got, "\n") + "\n"
		if len(got) > max(tt.n, 3) {
			t.Errorf("n=%d: %d rows", tt.n, len(got))
		}
		if got[0] != all[0] && !strings.HasPrefix(got[0], all[0]+" · ") {
			t.Errorf("n=%d: the summary row is gone: %q", tt.n, got[0])
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("n=%d: lacks %q:\n%s", tt.n, w, text)
			}
		}
		for _, l := range tt.lack {
			if strings.Contains(text, l) {
				t.Errorf("n=%d: shows %q, the head of the diff rather than the change:\n%s", tt.n, l, text)
			}
		}
	}
	// The change at the end: no row for "below", more context above.
	tail := append(append([]string{}, all[:11]...), "  11 + NEW last")
	got := strings.Join(changedInView(st, tail, 5), "\n")
	if !strings.Contains(got, "NEW last") || strings.Contains(got, "more rows") || !strings.Contains(got, "context 8") {
		t.Errorf("a change at the end:\n%s", got)
	}
}
