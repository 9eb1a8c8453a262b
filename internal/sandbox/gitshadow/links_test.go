package gitshadow

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestObjectStore: every object of a repository is found whether loose
// or packed (index versions 1 and 2, SHA-1 and SHA-256), and ids it does
// not hold are not, on either side of each found one in the sort order.
func TestObjectStore(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "no git on PATH")
	}
	for _, tc := range []struct {
		name   string
		init   []string
		gc     []string
		sha256 bool
	}{
		{"loose", []string{"init", "-q"}, nil, false},
		{"idx v2", []string{"init", "-q"}, []string{"gc", "-q"}, false},
		{"idx v1", []string{"init", "-q"}, []string{"-c", "pack.indexVersion=1", "gc", "-q"}, false},
		{"sha256", []string{"init", "-q", "--object-format=sha256"}, []string{"gc", "-q"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, tc.init...)
			for i, name := range []string{"a", "b", "c/d", "c/e"} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", i+1)), 0o644)
				git(t, dir, "add", name)
				git(t, dir, "commit", "-q", "-m", name)
			}
			if tc.gc != nil {
				git(t, dir, tc.gc...)
				if ents, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.idx")); len(ents) == 0 {
					t.Fatal("gc wrote no pack")
				}
			}
			s := newObjectStore(filepath.Join(dir, ".git"), tc.sha256)
			all := strings.Fields(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
			if len(all) < 12 {
				t.Fatalf("only %d objects", len(all))
			}
			if m := s.missing(all); len(m) > 0 {
				t.Errorf("held but reported missing: %v", m)
			}
			var absent []string
			for _, o := range all {
				// Neighbours in the sort order: the last digit changed.
				for _, d := range []string{"0", "f"} {
					if n := o[:len(o)-1] + d; n != o && !strings.Contains(strings.Join(all, " "), n) {
						absent = append(absent, n)
					}
				}
			}
			if m := s.missing(absent); len(m) != len(absent) {
				t.Errorf("%d of %d absent ids reported held", len(absent)-len(m), len(absent))
			}
		})
	}
}

func TestObjectLinks(t *testing.T) {
	tree := append([]byte("100644 a\x00"), make([]byte, 20)...)
	tree = append(tree, append([]byte("160000 sub\x00"), bytesOf(0x11, 20)...)...)
	tree = append(tree, append([]byte("40000 d\x00"), bytesOf(0xab, 20)...)...)
	for _, tc := range []struct {
		kind, body string
		want       string
		bad        bool
	}{
		{"tree", string(tree), "0000000000000000000000000000000000000000 abababababababababababababababababababab", false},
		{"tree", "100644 a\x00short", "", true},
		{"commit", "tree " + strings.Repeat("1", 40) + "\nparent " + strings.Repeat("2", 40) + "\nauthor a <a@b> 1 +0000\n\nparent " + strings.Repeat("3", 40) + "\n", strings.Repeat("1", 40) + " " + strings.Repeat("2", 40), false},
		{"commit", "tree xyz\n\n", "", true},
		{"tag", "object " + strings.Repeat("4", 40) + "\ntype commit\ntag v\n\nmsg\n", strings.Repeat("4", 40), false},
		{"blob", "tree " + strings.Repeat("1", 40), "", false},
	} {
		got, err := objectLinks(tc.kind, []byte(tc.body), 20)
		if (err != nil) != tc.bad || strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q: %v, %v; want %q (error %v)", tc.kind, tc.body, got, err, tc.want, tc.bad)
		}
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
