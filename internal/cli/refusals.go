package cli

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"
)

// exitNothingWritten is harness run's status when the task needed writes
// and every one was refused for want of an approval nobody can give
// headless.
const exitNothingWritten = 3

// refusals tallies, for harness run, the calls the gate refused because
// they needed an approval.
type refusals struct {
	mu      sync.Mutex
	refused []permission.Record
}

func (r *refusals) note(rec permission.Record) {
	if rec.Answer != "deny (non-interactive)" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = append(r.refused, rec)
}

// stampLimit bounds the files projectStamp looks at.
const stampLimit = 50000

// projectStamp condenses the project's files (path, size, modification
// time; not .git) into one value, so a run can tell whether anything in
// the project changed. ok is false for a project too big to look at.
func projectStamp(root string) (stamp string, ok bool) {
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts count as unchanged
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if n++; n > stampLimit {
			return errTooBig
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00%v\n", p, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		}
		return nil
	})
	if err != nil {
		return "", false
	}
	return string(h.Sum(nil)), true
}

var errTooBig = errors.New("too many files")

// allowRe finds the flags a headless refusal names (the gate's message to
// the model ends "re-run with --allow 'PATTERN' … or --yolo").
var allowRe = regexp.MustCompile(`--allow '(?:[^']|'\\'')*'`)

// blocked says why nothing could be written, with what would allow it,
// or "" when something in the project changed (before and after are
// projectStamp's) or nothing was refused. messages are the refusals'
// texts as the model got them, for the --allow flags they name.
func (r *refusals) blocked(project, before, after string, messages []string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.refused) == 0 || before == "" || before != after {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nothing was written: %d call(s) needed an approval, which harness run cannot ask for:", len(r.refused))
	for _, rec := range r.refused {
		what := rec.Command
		if what == "" {
			what = strings.TrimPrefix(strings.TrimPrefix(rec.Path, project), "/")
		}
		fmt.Fprintf(&b, "\n  %s %s  (%s)", rec.Tool, firstLine(what), rec.Rule)
	}
	seen := map[string]bool{}
	var flags []string
	for _, m := range messages {
		for _, f := range allowRe.FindAllString(m, -1) {
			if !seen[f] {
				seen[f] = true
				flags = append(flags, f)
			}
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(&b, "\nre-run with %s (or --yolo; the sandbox stays on), or put the rules in .agents/permissions", strings.Join(flags, " "))
	} else {
		b.WriteString("\nre-run with --allow 'PATTERN' for what it needs, or --yolo (the sandbox stays on)")
	}
	return b.String()
}

// refusalWatch keeps the texts of results refused headless (they name
// the --allow flags) on the way to the run's observer.
type refusalWatch struct {
	agent.Observer
	mu   sync.Mutex
	msgs []string
}

func (w *refusalWatch) OnToolEnd(call, res llm.Block, d time.Duration) {
	if res.IsError && strings.Contains(res.Content, "non-interactive mode") {
		w.mu.Lock()
		w.msgs = append(w.msgs, res.Content)
		w.mu.Unlock()
	}
	w.Observer.OnToolEnd(call, res, d)
}

func (w *refusalWatch) messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}
