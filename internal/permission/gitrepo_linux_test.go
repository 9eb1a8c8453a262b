package permission

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// A repository the agent makes during the session is protected by the
// sandbox from then on (Refresh), but its config was the agent's to write
// first: a "read-only" git status there runs what it names. The gate must
// ask, however the repository is reached.
func TestRepositoryMadeInSession(t *testing.T) {
	pol, proj := corpusProject(t)
	ctx := context.Background()
	sb, err := sandbox.Open(ctx, walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	g := mustNew(t, Options{Policy: sb.Live()}) // sees what the sandbox's Refresh adopts, as in a session
	r, err := sb.Run(ctx, sandbox.Cmd{Script: "git init -q evil && git -C evil config core.fsmonitor 'touch ../pwned; false' && echo made", Timeout: 10 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("setting up the repository: %v %s", err, r.Output)
	}
	for _, cmd := range []string{"git -C evil status", "cd evil && git status", "git --git-dir=evil/.git status", "cd evil; git log -1"} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != Ask {
			t.Errorf("%q = %s %q, want ask", cmd, d.Verdict, d.Rule)
		}
	}
	// The project's own repository, protected since the start, is fine.
	if d := g.Decide(Request{Tool: "bash", Command: "git status"}); d.Verdict != Allow {
		t.Errorf("git status = %s %q, want allow", d.Verdict, d.Rule)
	}
	// And the danger is real: run there, git status runs the fsmonitor.
	if _, err := sb.Run(ctx, sandbox.Cmd{Script: "git -C evil status >/dev/null 2>&1", Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(proj, "pwned")); err != nil {
		t.Logf("git status in the agent's repository did not run its fsmonitor here (%v); the gate asks regardless", err)
	}
}
