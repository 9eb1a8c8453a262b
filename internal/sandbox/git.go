package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// gitOutputLimit bounds what Git returns, as on the host.
const gitOutputLimit = gitsafe.MaxOutput

// Git runs git inside sb's walls in dir (the project when empty) and
// returns its standard output: configuration the agent wrote in a
// repository (filters, fsmonitor, hooks, aliases) runs there, if at all,
// never on the host. harness's own git calls go through it.
func Git(ctx context.Context, sb Sandbox, dir string, args ...string) ([]byte, error) {
	out := &walls.BoundedBuffer{Limit: gitOutputLimit}
	errOut := &walls.BoundedBuffer{Limit: 4096}
	r, err := sb.Run(ctx, Cmd{Script: "exec " + gitsafe.Shell(args...), Dir: dir, Timeout: 30 * time.Second, Stdout: out, Stderr: errOut})
	if err != nil {
		return nil, err
	}
	stdout, cut := out.Result()
	if cut > 0 {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), gitsafe.ErrOutputTooLarge)
	}
	if r.ExitCode != 0 {
		msg, _ := errOut.Result()
		return nil, fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), r.ExitCode, strings.TrimSpace(string(msg)))
	}
	return stdout, nil
}
