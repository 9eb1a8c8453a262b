package sandbox

import (
	"strings"
	"testing"
)

// TestLimitsFromGivenEnv: what Limits says about the launcher comes from
// the options the caller passes (its environment read through WithEnv),
// never from this process's environment.
func TestLimitsFromGivenEnv(t *testing.T) {
	t.Setenv(LauncherEnv, "0")
	const line = "without the launcher (HARNESS_SANDBOX_LAUNCHER=0) nothing forwards"
	off := func(k string) string {
		if k == LauncherEnv {
			return "0"
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want bool
	}{
		{"no options, the process's variable set", nil, false},
		{"the given environment turns it off", []Option{WithEnv(off)}, true},
		{"LauncherFromEnv", []Option{LauncherFromEnv(off)}, true},
		{"an explicit launcher wins", []Option{WithEnv(off), WithLauncher(true)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Contains(strings.Join(Limits(BackendBwrap, tc.opts...), "\n"), line)
			if got != tc.want {
				t.Errorf("Limits says the launcher is off: %v, want %v", got, tc.want)
			}
		})
	}
}
