package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/permission"
)

// runChat is the interactive session: a plain line loop. Ctrl-C stops the
// current turn and returns to the prompt; EOF quits.
func runChat(ctx context.Context, g *globalOptions, stdio Stdio) error {
	in := bufio.NewReader(stdio.stdin())
	s, err := openSession(ctx, g, stdio, sessionSetup{Prompter: &permission.TerminalPrompter{In: in, Out: stdio.Err}})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdio.Err, "harness %s · %s · %s · sandbox %s\n", Version, s.Sandbox.Policy().Project, s.Config.Model, s.Sandbox.Backend())
	for _, w := range s.Warnings {
		fmt.Fprintln(stdio.Err, "warning:", w)
	}
	obs := &progressObserver{w: stdio.Err}
	s.SetNotify(func(msg string) { obs.OnNotice(msg) })
	for {
		fmt.Fprint(stdio.Err, "> ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line == "/exit" {
			return nil
		}
		turn, cancel := signal.NotifyContext(ctx, os.Interrupt)
		res, err := s.Agent.Run(turn, line, obs)
		cancel()
		switch {
		case errors.Is(err, agent.ErrInterrupted):
			fmt.Fprintln(stdio.Err, "(interrupted)")
		case err != nil:
			fmt.Fprintln(stdio.Err, "error:", err)
		case res != nil:
			fmt.Fprintln(stdio.Out, res.Text)
		}
	}
}
