package lsp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestGoplsInTheWalls: the real gopls, started by the built-in table from
// PATH inside a bwrap sandbox, reports a type error for the version that
// has it and nothing for the fix, and keeps its cache in the project's
// cache, not the user's.
func TestGoplsInTheWalls(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("gopls"); err != nil {
		testenv.Missing(t, testenv.Gopls, "gopls is not on PATH (GOBIN=$HOME/go/bin go install golang.org/x/tools/gopls@v0.23.0)")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	// Outside /tmp, which the walls replace.
	base, err := os.MkdirTemp("/var/tmp", "harness-lsp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj, home, cache := filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "cache")
	for _, d := range []string{proj, home, cache} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	env := append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home, Environ: env, CacheRoot: cache})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+err.Error())
	}
	t.Cleanup(func() { sb.Close() })
	n := &notes{}
	m := New(Options{Sandbox: sb, Project: pol.Project(), Servers: Builtin(), Path: os.Getenv("PATH"), Notify: n.add})
	defer m.Close()

	path := filepath.Join(pol.Project(), "main.go")
	bad := "package main\n\nfunc main() {\n\tvar n int = \"one\"\n\t_ = n\n}\n"
	os.WriteFile(path, []byte(bad), 0o644)
	start := time.Now()
	got := m.Diagnose(context.Background(), path, []byte(bad))
	t.Logf("first edit (gopls starting): %v", time.Since(start).Round(time.Millisecond))
	want := "main.go:4:14: error: cannot use \"one\" (untyped string constant) as int value in variable declaration"
	if !strings.Contains(got, want) {
		t.Fatalf("got %q, want %q (notes %q)", got, want, n.all())
	}
	good := strings.Replace(bad, `"one"`, "1", 1)
	os.WriteFile(path, []byte(good), 0o644)
	start = time.Now()
	if got := m.Diagnose(context.Background(), path, []byte(good)); got != "" {
		t.Fatalf("after the fix: %q", got)
	}
	t.Logf("the fix (gopls warm): %v", time.Since(start).Round(time.Millisecond))
	if l := n.all(); len(l) > 0 {
		t.Errorf("notes: %q", l)
	}
	caches, _ := filepath.Glob(filepath.Join(cache, "projects", "*", "cache", "xdg", "gopls"))
	if len(caches) != 1 {
		t.Errorf("gopls's cache is not in the project's cache under %s", cache)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "gopls")); err == nil {
		t.Errorf("gopls wrote the user's cache %s", filepath.Join(home, ".cache", "gopls"))
	}
}
