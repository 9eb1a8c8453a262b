package walls

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzCheckWrite builds paths from the fixture's tricky pieces (symlinks
// out and in, dot-dot, .git, .agents, /proc/self/root) and, for every path
// CheckWrite accepts, really writes the file: it must land inside the
// project and outside every carve-out, and nothing outside the project may
// change. This is the host-side file tools' wall.
func FuzzCheckWrite(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("POSIX paths")
	}
	for _, s := range []string{"src/a.go", "link-out/x", "src/up/outside/x", "link-git/config", "../outside/x", "new/.git/x", "link-to-self/../../x", ".agents/x", "dangling"} {
		f.Add(s)
	}
	p, proj, home, outside := policyFixture(f)
	base := filepath.Dir(proj)
	snapshot := func() map[string]bool {
		seen := map[string]bool{}
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !strings.HasPrefix(path, proj+"/") {
				seen[path] = true
			}
			return nil
		})
		return seen
	}
	before := snapshot()
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.ContainsRune(rel, 0) || len(rel) > 200 {
			return
		}
		for _, path := range []string{filepath.Join(proj, rel), "/proc/self/root" + filepath.Join(proj, rel), filepath.Join(home, rel), rel} {
			if p.CheckWrite(path) != nil {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				continue
			}
			if err := os.WriteFile(path, []byte("fuzz"), 0o644); err != nil {
				continue
			}
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				t.Fatalf("wrote %s but cannot resolve it: %v", path, err)
			}
			if !Within(real, proj) {
				t.Fatalf("CheckWrite allowed %s, which landed at %s outside the project", path, real)
			}
			for _, r := range p.readOnly {
				if Within(real, r) {
					t.Fatalf("CheckWrite allowed %s inside the carve-out %s", path, r)
				}
			}
		}
		for path := range snapshot() {
			if !before[path] {
				t.Fatalf("%s appeared outside the project (input %q)", path, rel)
			}
		}
		_ = outside
	})
}
