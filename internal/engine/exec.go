package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// Stop says how Run ends an exec whose context is done before it is:
// Soft first (an interrupt, or the end of its stdin), then, if its output
// has not ended within Grace, Hard (a kill, or closing the stream).
type Stop struct {
	Soft, Hard func(execID string, att *client.HijackedResponse)
	Grace      time.Duration
}

// Run attaches to the created exec execID, copies its output to stdout
// and stderr until it ends, and returns its exit code; forced reports
// that Stop.Hard was needed. The engine's calls are made without ctx's
// cancellation: ctx only decides when to stop the exec.
func Run(ctx context.Context, cli *client.Client, execID string, stdout, stderr io.Writer, stop Stop) (code int, forced bool, err error) {
	bg := context.WithoutCancel(ctx)
	att, err := cli.ExecAttach(bg, execID, client.ExecAttachOptions{})
	if err != nil {
		return -1, false, fmt.Errorf("exec: %w", err)
	}
	defer att.Close()
	copied := make(chan error, 1)
	go func() {
		// Without a TTY the engine multiplexes stdout and stderr.
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		copied <- err
	}()
	select {
	case <-copied:
	case <-ctx.Done():
		if stop.Soft != nil {
			stop.Soft(execID, &att.HijackedResponse)
		}
		select {
		case <-copied:
		case <-time.After(stop.Grace):
			forced = true
			if stop.Hard != nil {
				stop.Hard(execID, &att.HijackedResponse)
			}
			<-copied
		}
	}
	return exitCode(bg, cli, execID, forced)
}

// exitCode waits for the engine to record the exec's exit: its stream
// ends a moment before.
func exitCode(ctx context.Context, cli *client.Client, execID string, forced bool) (int, bool, error) {
	for i := 0; ; i++ {
		in, err := cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return -1, forced, fmt.Errorf("exec: %w", err)
		}
		if !in.Running {
			return in.ExitCode, forced, nil
		}
		if i > 500 {
			return -1, forced, fmt.Errorf("exec: the command's output ended but it still runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
