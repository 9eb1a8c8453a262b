package gitsafe

import (
	"context"
	"os"
	"os/exec"
	"strings"
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
		b.WriteString(" " + Quote(a))
	}
	return b.String()
}

// Quote single-quotes s for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
