package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSeatbeltProfile checks the generated macOS profile against golden
// files: the profile text never holds a path (they are -D parameters), so
// a project named with quotes and parentheses cannot change it.
func TestSeatbeltProfile(t *testing.T) {
	tests := []struct {
		name string
		pol  *Policy
	}{
		{"plain", &Policy{
			Project:   "/Users/me/proj",
			Writable:  []string{"/Users/me/proj"},
			ReadOnly:  []string{"/Users/me/proj/.git"},
			Protected: []string{"/Users/me/proj/.git", "/Users/me/proj/.agents"},
			DenyRead:  []string{"/Users/me/.ssh", "/Users/me/.agents/env"},
			Timeout:   time.Minute,
		}},
		{"hostile-names", &Policy{
			Project:   `/Users/me/a "b") (allow file-write* (subpath "/"))`,
			Writable:  []string{`/Users/me/a "b") (allow file-write* (subpath "/"))`, "/private/tmp/extra dir"},
			ReadOnly:  []string{`/Users/me/a "b") (allow file-write* (subpath "/"))/.git`, `/Users/me/a "b") (allow file-write* (subpath "/"))/vendor/x/.git`},
			Protected: []string{`/Users/me/a "b") (allow file-write* (subpath "/"))/.git`},
			DenyRead:  []string{"/Users/me/.ssh"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			profile, params := seatbeltProfile(tt.pol, "/private/var/folders/xy/T/harness-session-1")
			if strings.Contains(profile, "/Users") || strings.Contains(profile, "/private/") {
				t.Errorf("a path was spliced into the profile:\n%s", profile)
			}
			got := profile + "\n;; parameters\n" + strings.Join(params, "\n") + "\n"
			golden := filepath.Join("testdata", "seatbelt", tt.name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestSeatbeltProfile -update)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s:\n%s", golden, got)
			}
			if !strings.Contains(profile, "(deny default)") || strings.Contains(profile, "network") && !strings.Contains(profile, "No network rules") {
				t.Errorf("profile must deny by default and allow no network:\n%s", profile)
			}
		})
	}
}

func TestAncestors(t *testing.T) {
	got := ancestors([]string{"/p/a/b/.git", "/p/.git"}, []string{"/p"})
	want := []string{"/p", "/p/a", "/p/a/b"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ancestors = %v, want %v", got, want)
	}
}
