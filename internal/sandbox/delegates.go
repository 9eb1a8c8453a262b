package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Hook managers: a protected hooks path is only as safe as what its hooks
// run. husky v9 sets core.hooksPath to .husky/_, whose stubs run
// .husky/<hook>; lefthook's and pre-commit's installed hooks run what
// their config in the work tree says. So beside a hooks path, what its
// hooks delegate to is read-only too (the config files and directories
// that exist: one a command creates later is reported by package autorun
// at the end of the turn, and this runs again after every command).

// delegateMarkers tell which manager installed a hook, by what its text
// names, and what in the work tree that manager then runs.
var delegateMarkers = []struct {
	marker string
	paths  []string
}{
	{"husky", []string{".husky"}},
	{"lefthook", []string{"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook-local.yml", "lefthook-local.yaml", ".lefthook", ".lefthook-local"}},
	{"pre-commit", []string{".pre-commit-config.yaml", ".pre-commit-config.yml"}},
}

// maxHookRead bounds the bytes of one hook read to find its manager.
const maxHookRead = 64 << 10

// protectDelegates makes read-only what the hooks in hooksDir delegate to
// in worktree, and husky's directory when hooksDir is its .husky/_.
func (p *Policy) protectDelegates(worktree, hooksDir string) error {
	var targets []string
	if filepath.Base(hooksDir) == "_" && filepath.Base(filepath.Dir(hooksDir)) == ".husky" {
		targets = append(targets, filepath.Dir(hooksDir))
	}
	if ents, err := os.ReadDir(hooksDir); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular() {
				continue
			}
			b, err := readFileNoFollow(filepath.Join(hooksDir, e.Name()), maxHookRead)
			if err != nil {
				continue
			}
			for _, d := range delegateMarkers {
				if bytes.Contains(bytes.ToLower(b), []byte(d.marker)) {
					for _, rel := range d.paths {
						targets = append(targets, filepath.Join(worktree, rel))
					}
				}
			}
		}
	}
	for _, t := range targets {
		if _, err := os.Lstat(t); err != nil {
			continue
		}
		if p.writableRootOf(resolve(t)) == "" {
			continue // outside the writable roots: read-only already
		}
		if err := p.protect(t); err != nil {
			return err
		}
	}
	return nil
}
