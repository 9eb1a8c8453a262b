package walls

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestPolicyRefreshBesideReaders: Refresh grows the carve-outs while the
// file tools check and write (two sub-agents do exactly this); under -race
// no reader may see the slices as they are appended to, and every
// repository found is walled for the writers from then on.
func TestPolicyRefreshBesideReaders(t *testing.T) {
	proj := t.TempDir()
	pol, err := NewPolicy(PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	const n = 60
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // a command making repositories, Refresh after each
		defer wg.Done()
		for i := 0; i < n; i++ {
			g := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git")
			os.MkdirAll(filepath.Join(g, "hooks"), 0o755)
			os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			l.Refresh()
		}
	}()
	go func() { // the file tools
		defer wg.Done()
		for i := 0; i < n*4; i++ {
			f := filepath.Join(proj, fmt.Sprintf("f%d.txt", i%7))
			_ = l.Policy().CheckWrite(f)
			_, _ = l.WriteFile(f, []byte("x"))
			_, _, _ = l.Policy().ReadFile(f, 1<<10)
			_ = l.Policy().CheckRead(f)
		}
	}()
	go func() { // what the backends and the UI read
		defer wg.Done()
		for i := 0; i < n*4; i++ {
			_ = l.Policy().ReadOnly()
			_ = l.Policy().Findings()
			_ = l.Policy().roots()
		}
	}()
	wg.Wait()
	for i := 0; i < n; i++ {
		hook := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git", "hooks", "pre-commit")
		if err := l.Policy().CheckWrite(hook); err == nil {
			t.Fatalf("%s is writable after Refresh found its repository", hook)
		}
	}
}
