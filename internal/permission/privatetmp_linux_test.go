package permission

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestPlantedLinkInPrivateTmp: a command plants a link in the sandbox's
// private /tmp pointing into the project; a later command writing through
// it must be asked about, as TestPrivateTmpSymlink asks with the host's
// view of /tmp given by hand. The sandbox gives that view itself
// (Live.SetTempDir when it opens): before it did, the policy's TempDir was
// never set outside tests, the gate could not look, and the write was
// allowed as one into scratch space.
func TestPlantedLinkInPrivateTmp(t *testing.T) {
	pol, proj := corpusProject(t)
	ctx := context.Background()
	sb, err := sandbox.Open(ctx, walls.NewLive(pol), sandbox.BackendBwrap)
	if errors.Is(err, sandbox.ErrUnavailable) {
		testenv.Missing(t, testenv.Bwrap, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Policy().TempDir() == "" {
		t.Error("the sandbox did not name its private /tmp in the session's policy")
	}
	g := mustNew(t, Options{Policy: sb.Live()})
	r, err := sb.Run(ctx, sandbox.Cmd{Script: "ln -s " + proj + "/main.go /tmp/link && mkdir /tmp/d && echo planted", Timeout: 10 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("planting the link: %v %s", err, r.Output)
	}
	for cmd, want := range map[string]Verdict{
		"echo x > /tmp/link":   Ask,
		"echo x > /tmp/link/y": Ask,
		"echo x > /tmp/d/y":    Allow,
		"echo x > /tmp/new":    Allow,
	} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != want {
			t.Errorf("%q = %s %q, want %s", cmd, d.Verdict, d.Rule, want)
		}
	}
}
