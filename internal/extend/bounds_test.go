package extend

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestHookOutputBounded: a hook that prints without end, or more than the
// limit, is read within a bounded heap; what it printed past the limit is
// dropped and the user is told, naming the limit; cut output decides
// nothing and adds no context; a block's reason says it was cut. The same
// for a user's hook (on the host) and a project's (inside the walls).
func TestHookOutputBounded(t *testing.T) {
	testenv.Slow(t)
	proj, home := t.TempDir(), t.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{"user", "project"} {
		t.Run(where, func(t *testing.T) {
			settings := filepath.Join(home, ".agents", "settings.json")
			if where == "project" {
				settings = filepath.Join(proj, ".agents", "settings.json")
			}
			os.MkdirAll(filepath.Dir(settings), 0o755)
			t.Cleanup(func() { os.Remove(settings) })
			var h *Hooks
			set := func(event, cmd string, timeout int) {
				type hook struct {
					Type    string `json:"type"`
					Command string `json:"command"`
					Timeout int    `json:"timeout"`
				}
				data, _ := json.Marshal(map[string]any{"hooks": map[string]any{event: []any{map[string]any{"hooks": []hook{{"command", cmd, timeout}}}}}})
				os.WriteFile(settings, data, 0o644)
				var warns []error
				// Anew: a project hook is approved as it is at the start.
				h, warns = NewHooks(HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, nil), Sandbox: &sandbox.None{L: walls.NewLive(pol)}, AllowProject: true})
				if len(warns) > 0 {
					t.Fatal(warns)
				}
			}
			ctx := context.Background()
			const limit = "more than 64 KiB, the limit harness reads from a hook"

			// Without end, until its timeout.
			set(UserPromptSubmit, "yes harness-hook-output", 2)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			began := time.Now()
			o := h.Fire(ctx, Event{Name: UserPromptSubmit, Prompt: "p"})
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("endless output for %s: %d KiB allocated", time.Since(began).Round(time.Millisecond), allocated>>10)
			if allocated > 8<<20 {
				t.Errorf("reading a hook's endless output allocated %d MiB", allocated>>20)
			}
			if o.Context != "" || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "timed out after 2s") || !strings.Contains(o.Notices[0], limit+", on stdout") {
				t.Errorf("endless output: context %d bytes, notices %q", len(o.Context), o.Notices)
			}

			// Past the limit, then an exit 0: nothing of it is used.
			set(UserPromptSubmit, "yes x | head -c 100000", 10)
			o = h.Fire(ctx, Event{Name: UserPromptSubmit, Prompt: "p"})
			if o.Context != "" || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], limit+", on stdout: its output was ignored") {
				t.Errorf("100 KB of context: context %d bytes, notices %q", len(o.Context), o.Notices)
			}

			// A block whose reason is past the limit still blocks, and says it was cut.
			set(PreToolUse, "yes y | head -c 100000 >&2; exit 2", 10)
			o = h.Fire(ctx, Event{Name: PreToolUse, Tool: "bash", Input: []byte(`{"command":"ls"}`)})
			if !o.Block || !strings.Contains(o.Reason, "[harness: the hook printed "+limit+", on stderr; the rest was dropped]") || len(o.Reason) > 70<<10 {
				t.Errorf("a long block reason: block %v, reason %d bytes ending %q", o.Block, len(o.Reason), o.Reason[max(0, len(o.Reason)-120):])
			}
		})
	}
}
