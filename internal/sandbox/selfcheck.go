package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/shellquote"
)

// SelfCheckError says why Open refused a backend: its self-check did not
// show walls that hold. It wraps ErrUnavailable.
type SelfCheckError struct {
	Backend string
	Kind    SelfCheckKind
	Detail  string // the command's first line of output, or what was seen
}

// SelfCheckKind separates "the walls did not hold" from "the sandbox did
// not work at all", which need different advice.
type SelfCheckKind int

const (
	// CheckNoRun: the backend could not start a command.
	CheckNoRun SelfCheckKind = iota + 1
	// CheckProfile: sandbox-exec refused the profile (exit 65: it did not compile).
	CheckProfile
	// CheckInner: the inner stage could not put up its walls (exit 125).
	CheckInner
	// CheckInside: a write inside the sandbox's own temporary directory failed.
	CheckInside
	// CheckEscaped: a write outside the project succeeded.
	CheckEscaped
	// CheckOtherError: the write outside failed, but not with a denial.
	CheckOtherError
)

func (e *SelfCheckError) Error() string {
	what := map[SelfCheckKind]string{
		CheckNoRun:      "could not run a command",
		CheckProfile:    "sandbox-exec refused the generated profile (exit 65: it did not compile on this macOS); please report it",
		CheckInner:      "could not apply its inner walls",
		CheckInside:     "could not write inside its own temporary directory, so commands would fail",
		CheckEscaped:    "wrote outside the project: its walls do not hold here",
		CheckOtherError: "saw a write outside the project fail, but not because the walls denied it, so it proves nothing",
	}[e.Kind]
	return fmt.Sprintf("%v: the %s backend's self-check %s: %s; try another --sandbox backend", ErrUnavailable, e.Backend, what, e.Detail)
}

func (e *SelfCheckError) Unwrap() error { return ErrUnavailable }

// sandboxExecFailed is sandbox-exec's exit status when the profile does not
// compile (EX_DATAERR) or cannot be applied.
const sandboxExecFailed = 65

// selfCheckScript writes inside the sandbox's temporary directory, then
// outside the project, printing a marker and the shell's error for each.
func selfCheckScript(target string) string {
	return `t="${TMPDIR:-/tmp}/harness-selfcheck-$$"
if (echo ok > "$t") 2>/dev/null && rm -f "$t"; then echo HARNESS-INSIDE-OK; else echo HARNESS-INSIDE-FAILED; fi
(echo escaped > ` + shellquote.Quote(target) + `) 2>&1
echo "HARNESS-OUTSIDE-EXIT=$?"`
}

// denialWords are how a shell reports a write the walls refused: Seatbelt
// and Landlock say EPERM or EACCES, a read-only bind says EROFS.
var denialWords = []string{"Operation not permitted", "Permission denied", "Read-only file system"}

// classifySelfCheck decides the self-check from what the command printed
// and whether the target exists on the host afterwards.
func classifySelfCheck(backend string, r *Result, escaped bool) error {
	out := r.Output
	fail := func(k SelfCheckKind, detail string) error {
		return &SelfCheckError{Backend: backend, Kind: k, Detail: detail}
	}
	ran := bytes.Contains(out, []byte("HARNESS-INSIDE-"))
	switch {
	case escaped || bytes.Contains(out, []byte("HARNESS-OUTSIDE-EXIT=0")):
		return fail(CheckEscaped, "the file was written")
	case !ran && r.ExitCode == sandboxExecFailed && backend == BackendSeatbelt:
		return fail(CheckProfile, firstLine(out))
	case !ran && r.ExitCode == inner.HelperFailed:
		return fail(CheckInner, firstLine(out))
	case !ran:
		return fail(CheckNoRun, fmt.Sprintf("exit %d: %s", r.ExitCode, firstLine(out)))
	case bytes.Contains(out, []byte("HARNESS-INSIDE-FAILED")):
		return fail(CheckInside, "echo > $TMPDIR failed")
	case !bytes.Contains(out, []byte("HARNESS-OUTSIDE-EXIT=")):
		return fail(CheckNoRun, "the command stopped before the write outside: "+firstLine(out))
	}
	for _, w := range denialWords {
		if bytes.Contains(out, []byte(w)) {
			return nil
		}
	}
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "HARNESS-") && strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	return fail(CheckOtherError, line)
}

// selfCheck writes inside the sandbox and outside the project from inside
// it: the first must succeed, the second fail with a denial, and the host
// must be unchanged.
func selfCheck(ctx context.Context, sb Sandbox) error {
	dir, err := os.MkdirTemp(outsideBase(), "harness-selfcheck-")
	if err != nil {
		return fmt.Errorf("sandbox self-check: %w", err)
	}
	defer os.RemoveAll(dir)
	target := dir + "/escaped"
	timeout := 10 * time.Second
	if IsContainer(sb.Backend()) {
		// The host's directories are not in the container at all: the
		// write outside goes to its read-only root.
		target = "/" + filepath.Base(dir)
		// An engine's exec on a busy machine (or on the vfs storage
		// driver) takes seconds; a slow engine is not a failed wall.
		timeout = time.Minute
	}
	r, err := sb.Run(ctx, Cmd{Script: selfCheckScript(target), Timeout: timeout})
	if err != nil {
		return &SelfCheckError{Backend: sb.Backend(), Kind: CheckNoRun, Detail: err.Error()}
	}
	_, serr := os.Lstat(target)
	return classifySelfCheck(sb.Backend(), r, !errors.Is(serr, os.ErrNotExist))
}
