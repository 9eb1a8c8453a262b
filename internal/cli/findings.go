package cli

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/autorun"
	"github.com/harness-dev/harness/internal/ui"
)

// findingJSON is one repository, gitdir or hooks path that appeared during
// a run (sandbox.Finding), in run's json output.
// A file that other programs run later (autorun.File) is one too, of kind
// "runs later", with its change and what runs it.
type findingJSON struct {
	Path     string   `json:"path"`
	Kind     string   `json:"kind"`
	RunsCode []string `json:"runs_code,omitempty"`
	Change   string   `json:"change,omitempty"`
	RunBy    string   `json:"run_by,omitempty"`
}

func findingsJSON(fs []sandbox.Finding, later []autorun.File) []findingJSON {
	var out []findingJSON
	for _, f := range fs {
		out = append(out, findingJSON{Path: f.Path, Kind: f.Kind, RunsCode: f.RunsCode})
	}
	for _, f := range later {
		out = append(out, findingJSON{Path: f.Path, Kind: "runs later", Change: f.Change, RunBy: f.RunBy})
	}
	return out
}

// laterWarning is the warning for files that other programs run later on
// the user's machine, created, changed or removed by the agent; "" when
// there are none.
func laterWarning(later []autorun.File) string {
	if len(later) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("SANDBOX WARNING: files that other programs run later on YOUR machine changed in this session; read them before they run:\n")
	for _, f := range later {
		fmt.Fprintf(&b, "  %s (%s): %s\n", ui.Visible(f.Path), f.Change, f.RunBy)
	}
	return b.String()
}

// findingsWarning is the closing warning of a session in which
// repositories or hooks paths appeared: each that configures code to run
// (a filter, fsmonitor, hook…) by path, loudly, since the user's next git
// command there runs it; "" when none does.
func findingsWarning(fs []sandbox.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		if len(f.RunsCode) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("SANDBOX WARNING: repositories created during this session configure code that git runs on YOUR machine; inspect them before you run git there:\n")
		}
		// The path and what it runs are the agent's to choose: escaped, so
		// no byte in them can erase or rewrite this warning.
		fmt.Fprintf(&b, "  %s (%s): %s\n", ui.Visible(f.Path), f.Kind, ui.Visible(strings.Join(f.RunsCode, ", ")))
	}
	return b.String()
}
