package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rooms of the sandbox (doc.go): the orchestration, this package,
// imports its mechanisms; no mechanism imports it back, on any platform
// it builds for, or the next move brings back the cycle that kept them
// in one package. The battery is a client of the orchestration, as the
// CLI is.

const module = "github.com/harness-dev/harness/internal/"

// mechanisms must never reach the orchestration, directly or through
// another package.
var mechanisms = []string{
	"sandbox/backend", "sandbox/container", "sandbox/linux/cgroup", "sandbox/linux/inner",
	"sandbox/seatbelt", "sandbox/netproxy", "sandbox/gitshadow", "sandbox/walls", "sandbox/autorun",
}

// goList returns, for every package under internal/sandbox and its
// dependencies as goos builds them, its direct imports.
func goList(t *testing.T, goos string) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the import graph")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v", goos, err)
	}
	graph := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		graph[f[0]] = f[1:]
	}
	return graph
}

// reaches returns the import chain from pkg to target, nil when there is none.
func reaches(graph map[string][]string, pkg, target string) []string {
	seen := map[string]bool{}
	var walk func(p string) []string
	walk = func(p string) []string {
		if p == target {
			return []string{p}
		}
		if seen[p] {
			return nil
		}
		seen[p] = true
		for _, q := range graph[p] {
			if chain := walk(q); chain != nil {
				return append([]string{p}, chain...)
			}
		}
		return nil
	}
	return walk(pkg)
}

func TestRoomsImportGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the import graph with the go command")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		graph := goList(t, goos)
		for _, m := range mechanisms {
			if chain := reaches(graph, module+m, module+"sandbox"); chain != nil {
				t.Errorf("%s: the mechanism %s imports the orchestration: %s", goos, m, strings.Join(chain, " -> "))
			}
		}
		// The engine's client (package engine) is the container
		// backend's alone.
		for pkg, imps := range graph {
			if !strings.HasPrefix(pkg, module+"sandbox") || pkg == module+"sandbox/container" {
				continue
			}
			if i := slices.IndexFunc(imps, func(s string) bool { return s == module+"engine" || strings.HasPrefix(s, "github.com/moby/") }); i >= 0 {
				t.Errorf("%s: %s imports %s; only sandbox/container may talk to the engine", goos, pkg, imps[i])
			}
		}
	}
}

// TestRoomsSize: no package under internal/sandbox holds more than 4,000
// production lines and no production file under internal/ more than
// 900, so each room stays one a reader can hold in mind.
func TestRoomsSize(t *testing.T) {
	perPkg := map[string]int{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := strings.Count(string(b), "\n")
		if n > 900 {
			t.Errorf("%s: %d lines; split it along its concerns (at most 900)", path, n)
		}
		if dir := filepath.Dir(path); strings.HasPrefix(filepath.ToSlash(dir), "../sandbox") {
			perPkg[dir] += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, n := range perPkg {
		if n > 4000 {
			t.Errorf("package %s: %d production lines (at most 4,000): move a mechanism out", dir, n)
		}
	}
}
