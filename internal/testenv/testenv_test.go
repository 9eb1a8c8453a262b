package testenv

import "testing"

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		env, feature string
		want         bool
	}{
		{"", Bwrap, false},
		{"bwrap,tmux", Bwrap, true},
		{"bwrap, tmux", Tmux, true},
		{"bwrapx", Bwrap, false},
		{"all", Setpriv, true},
	} {
		t.Setenv(RequireEnv, tc.env)
		if got := Required(tc.feature); got != tc.want {
			t.Errorf("%s=%q: Required(%q) = %v", RequireEnv, tc.env, tc.feature, got)
		}
	}
}

// TestRequireSpelling fails a run whose HARNESS_REQUIRE names no known
// feature (a typo would require nothing).
func TestRequireSpelling(t *testing.T) {
	if u := Unknown(); len(u) > 0 {
		t.Fatalf("%s names unknown features %q; known: %q", RequireEnv, u, Features)
	}
	t.Setenv(RequireEnv, "bwrap,landlok")
	if u := Unknown(); len(u) != 1 || u[0] != "landlok" {
		t.Fatalf("Unknown() = %q", u)
	}
}
