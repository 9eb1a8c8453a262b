package doors

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// probe is one attack on one door.
type probe struct {
	name string
	// live probes need a real sandbox backend; without one they are
	// skipped, saying so.
	live bool
	// absent, when set, says why backend has no such door (the probe is
	// skipped, saying so), or "" when it has.
	absent func(backend string) string
	// run attacks in w and returns what got through ("" when the door
	// held) and a note.
	run func(ctx context.Context, w *world) (problem, note string)
}

// probes is every probe, in the order doctor prints them; each class's
// file adds its own.
var probes []probe

func register(ps ...probe) { probes = append(probes, ps...) }

// Names lists the probes, for the tests that require each to run.
func Names() []string {
	out := make([]string, len(probes))
	for i, p := range probes {
		out[i] = p.name
	}
	return out
}

// world is one probe's throw-away machine: a project, a sibling directory
// outside it with a canary file, a home with a canary secret, and the
// policy a session there would have.
type world struct {
	base, project, outside, home string
	canary, secret               string // their paths
	pol                          *walls.Policy
	backend                      string
	opts                         []sandbox.Option
}

const (
	canaryText = "outside the project: harness must never read or write this\n"
	secretText = "-----BEGIN OPENSSH PRIVATE KEY----- doors canary\n"
)

func newWorld(backendName string, opts []sandbox.Option) (*world, error) {
	base, err := os.MkdirTemp(backend.OutsideBase(), "harness-doors-")
	if err != nil {
		return nil, err
	}
	if base, err = filepath.EvalSymlinks(base); err != nil {
		return nil, err
	}
	w := &world{base: base, project: filepath.Join(base, "project"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"), backend: backendName, opts: opts}
	w.canary, w.secret = filepath.Join(w.outside, "keep.txt"), filepath.Join(w.home, ".ssh", "id_rsa")
	for _, d := range []string{w.project, w.outside, filepath.Dir(w.secret)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(w.canary, []byte(canaryText), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(w.secret, []byte(secretText), 0o600); err != nil {
		return nil, err
	}
	if w.pol, err = walls.NewPolicy(walls.PolicyOptions{Project: w.project, Home: w.home}); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *world) close() { os.RemoveAll(w.base) }

// Run runs every probe against backend ("" or none: the probes that need
// a sandbox are skipped) and prints one line each to out, as the escape
// battery does; it returns how many got through.
func Run(ctx context.Context, backendName string, out io.Writer, opts ...sandbox.Option) (escaped int, err error) {
	fmt.Fprintf(out, "doors battery: what harness does on the host for commands (backend %s)\n", backendName)
	for _, p := range probes {
		if p.live && (backendName == "" || backendName == sandbox.BackendNone) {
			fmt.Fprintf(out, "skip     %-40s no sandbox backend\n", p.name)
			continue
		}
		if p.absent != nil {
			if why := p.absent(backendName); why != "" {
				fmt.Fprintf(out, "skip     %-40s %s\n", p.name, why)
				continue
			}
		}
		w, err := newWorld(backendName, opts)
		if err != nil {
			return escaped, fmt.Errorf("doors: a world for %s: %w", p.name, err)
		}
		problem, note := p.run(ctx, w)
		w.close()
		if note != "" {
			note = " (" + note + ")"
		}
		if problem == "" {
			fmt.Fprintf(out, "held     %s%s\n", p.name, note)
			continue
		}
		escaped++
		fmt.Fprintf(out, "ESCAPED  %-40s %s%s\n", p.name, problem, note)
	}
	return escaped, nil
}
