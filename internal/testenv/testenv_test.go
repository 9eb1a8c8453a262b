package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

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

// TestWithoutUserns: a command run through WithoutUserns sees a limit of
// zero user namespaces and cannot create one, while the test itself, on a
// machine that has them, still can.
func TestWithoutUserns(t *testing.T) {
	if err := WithoutUsernsUnavailable(); err != nil {
		Missing(t, Userns, err.Error())
	}
	argv := WithoutUserns("sh", "-c", `cat /proc/sys/user/max_user_namespaces; unshare --user true && echo created || echo refused`)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	if got := string(out); !strings.HasPrefix(got, "0\n") || !strings.HasSuffix(got, "refused\n") {
		t.Errorf("without user namespaces: %q, want the limit 0 and the unshare refused", got)
	}
	if out, err := exec.Command("unshare", "--user", "true").CombinedOutput(); err != nil {
		t.Errorf("outside it, this machine's user namespaces stopped working: %v: %s", err, out)
	}
}
