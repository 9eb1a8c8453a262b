package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// The tables decide against a real policy on a real tree: proj (with a
// .git the policy protects), a second writable root extra, and home with
// secrets the policy never lets be read.
var (
	proj, home, extra string
	testPol           *walls.Policy
)

func TestMain(m *testing.M) {
	// The sandbox re-executes the test binary as its inner stage.
	inner.RunHelperIfRequested()
	base, err := os.MkdirTemp(outsideTmp(), "harness-permission-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	base, _ = filepath.EvalSymlinks(base)
	proj, home, extra = filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "extra")
	for _, d := range []string{proj + "/.git/objects", proj + "/.git/refs", proj + "/sub", home + "/.ssh", home + "/.aws", extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.WriteFile(proj+"/.git/HEAD", []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(proj+"/.git/config", []byte("[core]\n"), 0o644)
	testPol, err = walls.NewPolicy(walls.PolicyOptions{Project: proj, AddDirs: []string{extra}, Home: home})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(base)
	os.Exit(code)
}

// outsideTmp is a directory for test projects that is not under /tmp: the
// sandbox replaces /tmp with a private one, so a project there would vanish
// inside it.
func outsideTmp() string {
	for _, d := range []string{os.Getenv("HARNESS_TEST_DIR"), "/var/tmp", os.Getenv("HOME")} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// testPolicy is the policy for a project of a test's own.
func testPolicy(t testing.TB, project, home string, addDirs ...string) *walls.Policy {
	t.Helper()
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: project, AddDirs: addDirs, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
