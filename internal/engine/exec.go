package engine

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Stop says how Run ends an exec whose context is done before it is:
// Soft first (an interrupt, or the end of its stdin), then, if its output
// has not ended within Grace, Hard (a kill, or closing the stream).
type Stop struct {
	Soft, Hard func(execID string, att *Stream)
	Grace      time.Duration
}

// Run attaches to the created exec execID, copies its output to stdout
// and stderr until it ends, and returns its exit code; forced reports
// that Stop.Hard was needed. The engine's calls are made without ctx's
// cancellation: ctx only decides when to stop the exec.
func Run(ctx context.Context, cli *Client, execID string, stdout, stderr io.Writer, stop Stop) (code int, forced bool, err error) {
	bg := context.WithoutCancel(ctx)
	att, err := cli.ExecAttach(bg, execID)
	if err != nil {
		return -1, false, fmt.Errorf("exec: %w", err)
	}
	defer att.Close()
	copied := make(chan error, 1)
	go func() {
		copied <- Demux(stdout, stderr, att)
	}()
	select {
	case <-copied:
	case <-ctx.Done():
		if stop.Soft != nil {
			stop.Soft(execID, att)
		}
		select {
		case <-copied:
		case <-time.After(stop.Grace):
			forced = true
			if stop.Hard != nil {
				stop.Hard(execID, att)
			}
			<-copied
		}
	}
	// The stream ends a moment before the engine records the exit.
	for i := 0; ; i++ {
		in, err := cli.ExecInspect(bg, execID)
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
