package walls

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRefreshRereadsAdoptedRepositories runs Refresh (after each new repository a
// "command" made) while the permission gate's checks and the file tools
// read the same Policy from other goroutines, as a session with parallel
// tool calls and sub-agents does. Under -race any unguarded read of what
// Refresh grows fails it; afterwards every repository made must be
// refused to writes.
func TestRefreshRereadsAdoptedRepositories(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := NewPolicy(PolicyOptions{Project: proj, Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	const repos = 20
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the "commands": each makes a repository, then Refresh
		defer wg.Done()
		defer close(done)
		for i := range repos {
			dot := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git")
			if err := os.MkdirAll(filepath.Join(dot, "hooks"), 0o755); err != nil {
				t.Error(err)
				return
			}
			os.WriteFile(filepath.Join(dot, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(dot, "config"), []byte("[core]\n\thooksPath = ../hooks"+fmt.Sprint(i)+"\n"), 0o644)
			l.Refresh() // or a file-tool write's Refresh beside it
		}
	}()
	readers := []func(n int) error{
		func(n int) error { // the gate
			l.Policy().CheckRead(filepath.Join(proj, "src", "a.go"))
			if err := l.Policy().CheckWrite(filepath.Join(proj, "src", "a.go")); err != nil {
				return err
			}
			l.Policy().CheckWrite(filepath.Join(proj, fmt.Sprintf("r%d", n%repos), ".git", "config"))
			return nil
		},
		func(n int) error { // write_file, read_file, edit_file
			path := filepath.Join(proj, "src", fmt.Sprintf("f%d.go", n%5))
			if _, err := l.WriteFile(path, []byte("package src\n")); err != nil {
				return err
			}
			_, _, err := l.Policy().ReadFile(path, 1<<20)
			return err
		},
		func(n int) error { // glob, grep
			return l.Policy().Walk(context.Background(), proj, func(string, fs.DirEntry) error { return nil })
		},
		func(n int) error { // what the backends and the launcher read
			l.Policy().Protected()
			l.Policy().ReadOnly()
			l.Policy().RoBinds()
			l.Policy().MaskPaths()
			l.Policy().KeepReadable()
			l.Policy().Generation()
			l.Policy().Findings()
			return nil
		},
	}
	for _, read := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				if err := read(n); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	found := map[string]bool{}
	for _, f := range l.Policy().Findings() {
		found[f.Path] = true
	}
	for i := range repos {
		for _, rel := range []string{".git/config", ".git/hooks/pre-commit"} {
			path := filepath.Join(proj, fmt.Sprintf("r%d", i), rel)
			if err := l.Policy().CheckWrite(path); err == nil {
				t.Errorf("%s writable after Refresh", path)
			}
			if _, err := l.WriteFile(path, []byte("x")); err == nil {
				t.Errorf("WriteFile %s succeeded after Refresh", path)
			}
		}
		if dot := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git"); !found[dot] {
			t.Errorf("Findings lacks %s", dot)
		}
		hooks := filepath.Join(proj, fmt.Sprintf("hooks%d", i), "pre-commit")
		if err := l.Policy().CheckWrite(hooks); err == nil {
			t.Errorf("hooks path %s writable after Refresh", hooks)
		}
	}
}

// TestHooksPathThatCannotBeMadeFailsClosed: a hooks path inside the
// project that is missing is created so it can be held read-only; when it
// cannot be, the policy must refuse to open, not go on without the
// carve-out (a command could then create it full of hooks).
func TestHooksPathThatCannotBeMadeFailsClosed(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, ".git", "config"), []byte("[core]\n\thooksPath = githooks\n"), 0o644)
	refused := errors.New("no space left on device")
	mkdirAll = func(string, os.FileMode) error { return refused }
	t.Cleanup(func() { mkdirAll = os.MkdirAll })
	_, err = NewPolicy(PolicyOptions{Project: proj})
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), "githooks") {
		t.Fatalf("NewPolicy = %v, want the hooks path's error", err)
	}
}

// TestRefreshSeesConfigWrittenAfterAdoption: a look adopts a repository
// while the command making it is still at work; the command then names a
// hooks path in its config (a new file, or the old one rewritten in
// place), long after (beyond any timestamp slack). The next Refresh must
// read the config again and hold the hooks path. Before, the adopted
// .git was never looked at again unless its parent changed: the hooks
// path stayed writable.
func TestRefreshSeesConfigWrittenAfterAdoption(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		t.Run(fmt.Sprintf("in place %v", inPlace), func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj := filepath.Join(base, "proj")
			dot := filepath.Join(proj, "r", ".git")
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			os.MkdirAll(proj, 0o755)
			pol, err := NewPolicy(PolicyOptions{Project: proj, Home: filepath.Join(base, "home")})
			if err != nil {
				t.Fatal(err)
			}
			l := NewLive(pol)
			os.MkdirAll(filepath.Join(dot, "hooks"), 0o755)
			os.WriteFile(filepath.Join(dot, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			if inPlace {
				os.WriteFile(filepath.Join(dot, "config"), []byte("[core]\n"), 0o644)
			}
			l.Refresh() // a parallel look adopts it
			time.Sleep(3 * ctimeSlack)
			l.Refresh() // and looks again, nothing new
			time.Sleep(3 * ctimeSlack)
			f, err := os.OpenFile(filepath.Join(dot, "config"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("[core]\n\thooksPath = ../hooks-late\n")
			f.Close()
			l.Refresh()
			if err := l.Policy().CheckWrite(filepath.Join(proj, "hooks-late", "pre-commit")); err == nil {
				t.Errorf("the hooks path named after adoption is writable")
			}
		})
	}
}
