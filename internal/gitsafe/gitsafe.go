package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/shellquote"
)

// Args are prepended to every git call of harness: no fsmonitor hook, no
// hooks, no attributes file, no pager, no optional locks.
var Args = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
	"-c", "core.attributesFile=/dev/null", "-c", "core.pager=cat", "--no-optional-locks"}

// Env is added to the environment of every host git call: no system or
// global configuration, no prompt, no pager, no optional locks.
var Env = []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1", "GIT_PAGER=cat"}

// Command returns a host git call in dir (the process's own when empty):
// Args, then args; the host environment without its GIT_* variables (a
// GIT_DIR, GIT_CONFIG_* or GIT_EXEC_PATH would change what runs), plus Env.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), Args...), args...)...)
	cmd.Dir = dir
	env := make([]string, 0, len(os.Environ())+len(Env))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, Env...)
	return cmd
}

// Shell spells git with Args and args as one line of POSIX shell words,
// each argument single-quoted.
func Shell(args ...string) string {
	var b strings.Builder
	b.WriteString("git")
	for _, a := range Args {
		b.WriteString(" " + a)
	}
	for _, a := range args {
		b.WriteString(" " + shellquote.Quote(a))
	}
	return b.String()
}

// MaxOutput bounds what harness reads of a host git call's standard
// output, as sandbox.Git bounds a call inside the walls: 16 MiB.
const MaxOutput = 16 << 20

// ErrOutputTooLarge is wrapped by Output's error for output over MaxOutput.
var ErrOutputTooLarge = fmt.Errorf("git printed more than %d MiB, the limit harness reads of its output", MaxOutput>>20)

// Output runs cmd (from Command) and returns its standard output, as
// exec.Cmd.Output does but never more than MaxOutput: past it nothing
// more is read, git is stopped (its pipe closed) and the error wraps
// ErrOutputTooLarge. A repository the agent could write (a tree of a
// million files for status to list) then costs a bounded heap.
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("gitsafe: Stdout already set")
	}
	out := &boundedWriter{limit: MaxOutput}
	cmd.Stdout = out
	err := cmd.Run()
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.over {
		args := cmd.Args[min(len(cmd.Args), 1+len(Args)):]
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), ErrOutputTooLarge)
	}
	return out.buf, err
}

// boundedWriter keeps limit bytes; a write past them fails, which ends
// exec's copy and closes the pipe.
type boundedWriter struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	over  bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > w.limit {
		w.over = true
		return 0, ErrOutputTooLarge
	}
	if len(w.buf)+len(p) > cap(w.buf) {
		// Doubled, not grown by a quarter as append grows a large slice:
		// output near the limit is copied twice, not twenty times.
		nb := make([]byte, len(w.buf), min(max(2*cap(w.buf), len(w.buf)+len(p), 4096), w.limit))
		copy(nb, w.buf)
		w.buf = nb
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}
