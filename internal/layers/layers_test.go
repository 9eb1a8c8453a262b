package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/harness-dev/harness/"

// imports maps each package directory (relative to the repository, e.g.
// "internal/cli") to the harness packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			if _, ok := out[rel]; !ok {
				out[rel] = nil
			}
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if dep, ok := strings.CutPrefix(path, module); ok && !slices.Contains(out[rel], dep) {
					out[rel] = append(out[rel], dep)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d packages: the walk did not see the source", len(out))
	}
	return out
}

// TestImportRules: the invariants of ARCHITECTURE.md's code map that an
// import can break.
func TestImportRules(t *testing.T) {
	deps := imports(t)
	importers := func(pkg string) []string {
		var out []string
		for p, ds := range deps {
			if slices.Contains(ds, pkg) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	only := func(pkg string, allowed ...string) {
		for _, p := range importers(pkg) {
			if !slices.Contains(allowed, p) && !strings.HasPrefix(p, pkg+"/") {
				t.Errorf("%s imports %s; only %v may", p, pkg, allowed)
			}
		}
	}
	only("internal/cli", "cmd/harness")
	only("internal/ui", "internal/cli")
	only("internal/app", "internal/cli", "internal/acp", "internal/doors")
	only("internal/doors", "internal/cli")
	only("internal/acp", "internal/cli")
	only("internal/testenv") // tests only
	// The sandbox helper binary links the inner stage alone: its start is
	// paid by every sandboxed command.
	if ds := deps["cmd/harness-sandbox"]; !slices.Equal(ds, []string{"internal/sandbox/linux/inner"}) {
		t.Errorf("cmd/harness-sandbox imports %v; only internal/sandbox/linux/inner", ds)
	}
	if ds := deps["internal/sandbox/linux/inner"]; len(ds) > 0 {
		t.Errorf("internal/sandbox/linux/inner imports %v: the helper binary would link them", ds)
	}
	// A provider adapter is its own: what two share lives below them
	// (llm, llm/sse, llm/cacheplan), and only the composition root and
	// the tests pick one.
	for _, a := range []string{"internal/llm/anthropic", "internal/llm/openai", "internal/llm/responses"} {
		for _, p := range importers(a) {
			if strings.HasPrefix(p, "internal/llm/") {
				t.Errorf("%s imports the adapter %s; move what they share below both", p, a)
			}
		}
	}
	// The language servers are wired by app; the tools know only a func.
	only("internal/lsp", "internal/app")
	// Leaves import nothing of harness's.
	for _, leaf := range []string{"internal/termsafe", "internal/jsonerr", "internal/notice", "internal/config",
		"internal/sandbox/walls", "internal/engine", "internal/shellquote", "internal/llm/sse", "internal/testenv"} {
		if _, ok := deps[leaf]; !ok {
			t.Errorf("%s is not there any more: update the rule", leaf)
		}
		if ds := deps[leaf]; len(ds) > 0 {
			t.Errorf("%s is a leaf but imports %v", leaf, ds)
		}
	}
	// Nothing below the front ends imports a front end's packages.
	for p, ds := range deps {
		if strings.HasPrefix(p, "internal/sandbox") && p != "internal/sandbox/battery" {
			for _, d := range ds {
				if !strings.HasPrefix(d, "internal/sandbox") && !slices.Contains([]string{"internal/gitsafe", "internal/engine", "internal/shellquote"}, d) {
					t.Errorf("%s (the walls) imports %s, above it", p, d)
				}
			}
		}
	}
}

// TestHelperLinksNoEngineClient: the sandbox helper starts once per
// command, inside the walls, so it must not link the Docker client or
// what the client brings (OpenTelemetry, the reference and digest
// parsers), which only the harness binary may (issue #44). This reads the
// linker's view, every dependency, not only harness's own imports.
func TestHelperLinksNoEngineClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/harness-sandbox").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/harness-dev/harness/internal/sandbox/linux/inner") {
		t.Fatalf("go list named no inner stage among the helper's dependencies: %q", deps)
	}
	for _, d := range deps {
		for _, banned := range []string{"github.com/moby/", "github.com/docker/", "github.com/containerd/", "go.opentelemetry.io/",
			"github.com/distribution/", "github.com/opencontainers/", "github.com/harness-dev/harness/internal/engine"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("cmd/harness-sandbox links %s: every sandboxed command would pay its init", d)
			}
		}
	}
}

// TestMapNamesEveryPackage: ARCHITECTURE.md names every package, so the
// map is complete.
func TestMapNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for p := range imports(t) {
		name := strings.TrimPrefix(p, "internal/")
		if strings.Contains(p, "/cmd/") || strings.HasSuffix(p, "test") {
			continue // test servers and their commands
		}
		if !strings.Contains(doc, "`"+p+"`") && !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("ARCHITECTURE.md does not name %s", p)
		}
	}
}
