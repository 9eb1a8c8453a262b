package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestFileToolsBesideRefresh: while a command makes repositories and the
// session's Refresh grows the carve-outs after each, the file tools read,
// write, edit and search the project and the permission gate asks
// CheckWrite, as a sub-agent beside the main agent does. Under -race no
// tool may see the policy's slices as they are appended to; and once
// Refresh has found a repository, write_file and edit_file refuse its
// hooks and the gate's CheckWrite answers no.
func TestFileToolsBesideRefresh(t *testing.T) {
	testenv.Slow(t)
	env, proj := newEnv(t)
	live := env.Sandbox.Live()
	ctx := context.Background()
	call := func(tool Tool, args map[string]any) Result {
		in, _ := json.Marshal(args)
		return tool.Run(ctx, in)
	}
	read, write, edit := &ReadFile{Env: env}, &WriteFile{Env: env}, &EditFile{Env: env}
	glob, grep := &Glob{Env: env}, &Grep{Env: env}
	const n = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	fail := func(format string, a ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	wg.Add(4)
	go func() { // a command making repositories; Refresh after each, as Run does
		defer wg.Done()
		for i := 0; i < n; i++ {
			g := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git")
			os.MkdirAll(filepath.Join(g, "hooks"), 0o755)
			os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			live.Refresh()
		}
	}()
	go func() { // write_file, edit_file, read_file on the project's own files
		defer wg.Done()
		for i := 0; i < n*2; i++ {
			f := filepath.Join(proj, fmt.Sprintf("f%d.txt", i%5))
			if r := call(write, map[string]any{"path": f, "content": "alpha\n"}); r.IsError {
				fail("write_file %s: %s", f, r.Content)
				continue
			}
			if r := call(edit, map[string]any{"path": f, "old_string": "alpha", "new_string": "beta"}); r.IsError {
				fail("edit_file %s: %s", f, r.Content)
			}
			if r := call(read, map[string]any{"path": f}); r.IsError || !strings.Contains(r.Content, "beta") {
				fail("read_file %s: %s", f, r.Content)
			}
		}
	}()
	go func() { // glob and grep walk the tree the command grows
		defer wg.Done()
		for i := 0; i < n; i++ {
			call(glob, map[string]any{"pattern": "**/*.txt"})
			call(grep, map[string]any{"pattern": "beta"})
		}
	}()
	go func() { // the permission gate
		defer wg.Done()
		for i := 0; i < n*4; i++ {
			_ = live.Policy().CheckWrite(filepath.Join(proj, fmt.Sprintf("f%d.txt", i%5)))
			_ = live.Policy().CheckWrite(filepath.Join(proj, fmt.Sprintf("r%d", i%n), ".git", "config"))
			_ = live.Policy().ReadOnly()
		}
	}()
	wg.Wait()
	for _, pr := range problems {
		t.Error(pr)
	}
	live.Refresh() // the last command's
	for i := 0; i < n; i++ {
		hook := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git", "hooks", "pre-commit")
		if err := live.Policy().CheckWrite(hook); err == nil {
			t.Errorf("the gate lets %s be written after Refresh found its repository", hook)
		}
		if r := call(write, map[string]any{"path": hook, "content": "#!/bin/sh\n"}); !r.IsError {
			t.Errorf("write_file planted %s after Refresh found its repository", hook)
		}
		if _, err := os.Stat(hook); err == nil {
			t.Errorf("%s exists", hook)
		}
	}
}
