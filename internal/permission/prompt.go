package permission

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// TerminalPrompter is a plain line-based Prompter: it prints the request,
// the rule that matched and the choices, then reads one line. The terminal
// UI can use it as is or wrap it.
type TerminalPrompter struct {
	In    io.Reader
	Out   io.Writer
	Color bool

	r       *bufio.Reader
	pending chan lineResult // a read still running after a cancelled prompt
}

type lineResult struct {
	line string
	err  error
}

// Prompt implements Prompter. "y"/"yes" allows once, "a"/"always" records
// pattern, "n"/"no" or an empty line refuses, any other text refuses with
// that text as the reason given to the model.
func (t *TerminalPrompter) Prompt(ctx context.Context, req Request, d Decision, pattern string) (Answer, error) {
	if t.r == nil {
		t.r = bufio.NewReader(t.In)
	}
	bold, dim, reset := "", "", ""
	if t.Color {
		bold, dim, reset = "\x1b[1m", "\x1b[2m", "\x1b[0m"
	}
	what := req.Command
	switch {
	case req.Tool != "bash" && req.Write:
		what = req.Tool + " (write) " + req.Path
	case req.Tool != "bash":
		what = req.Tool + " " + req.Path
	}
	fmt.Fprintf(t.Out, "%sharness wants to run:%s\n  %s%s%s\n%s  rule: %s%s\n",
		bold, reset, bold, indent(what), reset, dim, d.Rule, reset)
	choices := "[y]es / [n]o"
	if pattern != "" {
		choices += fmt.Sprintf(" / [a]lways %q", pattern)
	}
	fmt.Fprintf(t.Out, "%s / or type a reason to refuse: ", choices)

	if t.pending == nil {
		ch := make(chan lineResult, 1)
		go func() {
			line, err := t.r.ReadString('\n')
			ch <- lineResult{line, err}
		}()
		t.pending = ch
	}
	var res lineResult
	select {
	case <-ctx.Done():
		fmt.Fprintln(t.Out)
		return Answer{Choice: No}, ctx.Err()
	case res = <-t.pending:
		t.pending = nil
	}
	line := strings.TrimSpace(res.line)
	if res.err != nil && (line == "" || !errors.Is(res.err, io.EOF)) {
		fmt.Fprintln(t.Out)
		return Answer{Choice: No}, fmt.Errorf("reading the answer: %w", res.err)
	}
	switch strings.ToLower(line) {
	case "y", "yes":
		return Answer{Choice: Yes}, nil
	case "a", "always":
		if pattern == "" {
			return Answer{Choice: Yes}, nil
		}
		rules := d.alwaysRules()
		if len(rules) == 0 {
			rules = []string{d.tool + " " + pattern}
		}
		fmt.Fprintf(t.Out, "%salways: allow %s%s\n", dim, strings.Join(rules, "; allow "), reset)
		return Answer{Choice: Always}, nil
	case "", "n", "no":
		return Answer{Choice: No}, nil
	}
	return Answer{Choice: No, Reason: line}, nil
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }
