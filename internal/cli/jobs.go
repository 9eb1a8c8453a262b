package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/tools"
	"github.com/harness-dev/harness/internal/ui"
)

// describeJobs is /ps: the session's background commands, or with
// "stop ID" the end of one.
func describeJobs(js *tools.Jobs, arg string) string {
	if js == nil {
		return "no background commands in this session"
	}
	if id, ok := strings.CutPrefix(strings.TrimSpace(arg), "stop "); ok {
		out, err := js.Stop(strings.TrimSpace(id))
		if err != nil {
			return "error: " + err.Error()
		}
		return ui.Sanitize(lastLines(out, 10))
	}
	list := js.List()
	if len(list) == 0 {
		return "no background commands (the model starts them with bash background: true)"
	}
	var sb strings.Builder
	for _, j := range list {
		state := "running " + time.Since(j.Started).Round(time.Second).String()
		if !j.Running {
			state = fmt.Sprintf("exited %d after %s", j.ExitCode, j.Ended.Sub(j.Started).Round(time.Second))
		}
		fmt.Fprintf(&sb, "%-7s %-20s %s\n", j.ID, state, ui.Sanitize(clipLine(j.Command, 100)))
		if j.URL != "" {
			// Where the dev server said it listens: inside the sandbox,
			// reached by web_fetch and the agent's commands.
			fmt.Fprintf(&sb, "        %s (inside the sandbox)\n", ui.Sanitize(j.URL))
		}
	}
	sb.WriteString("/ps stop ID kills one and everything it started; all end with the session")
	return sb.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func clipLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
