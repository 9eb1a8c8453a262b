package battery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/tools"

	"github.com/harness-dev/harness/internal/shellquote"
)

// modeProbe: a mode is a state of the whole session. A background command
// started under writable walls appends to a project file in a loop; the
// switch into plan mode (the policy made read-only, then the session's
// commands follow, as extend.Modes.Set does) must stop it: on the host,
// the file does not grow afterwards. The MCP servers' side is the mcp and
// app packages' tests (it needs a server the battery does not ship).
func modeProbe(sb sandbox.Sandbox, proj, tag string) probe {
	return probe{name: "plan mode stops a writer already running", host: func(ctx context.Context) (string, string) {
		live := sb.Live()
		if live.Policy().ProjectReadOnly() {
			return "", "already in plan mode"
		}
		js := &tools.Jobs{Sandbox: sb}
		defer js.Close()
		out := filepath.Join(proj, "mode-"+tag)
		defer os.Remove(out)
		if _, err := js.Start("while :; do echo x >> "+shellquote.Quote(out)+"; sleep 0.01; done", false); err != nil {
			return err.Error(), ""
		}
		size := func() int64 {
			st, err := os.Stat(out)
			if err != nil {
				return -1
			}
			return st.Size()
		}
		for deadline := time.Now().Add(10 * time.Second); size() <= 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				return "", "the writer never wrote; nothing to stop"
			}
		}
		start := time.Now()
		live.SetProjectReadOnly(true)
		defer live.SetProjectReadOnly(false)
		js.Follow(true)
		took := time.Since(start)
		before := size()
		time.Sleep(500 * time.Millisecond)
		if after := size(); after != before {
			return fmt.Sprintf("still written after the switch: %d bytes, then %d half a second later", before, after), ""
		}
		return "", "stopped in " + took.Round(time.Millisecond).String()
	}}
}
