package ui

import (
	"fmt"
	"runtime"
	"strings"
)

// Banner is what the session shows first: who is talking to which model
// under which walls, and anything wrong said plainly with what to do.
type Banner struct {
	Version  string
	Project  string // project directory
	Model    string
	Provider string // "anthropic", "openai"
	BaseURL  string // shown when not the provider's default
	Backend  string // sandbox backend: bwrap, landlock, seatbelt, none
	// Enforces is the one-line summary of the walls; empty uses the
	// standard sentence for the backend.
	Enforces string
	Session  string // session id, or "resumed <id>"

	KeyMissing  bool  // no API key for a provider that needs one
	EndpointErr error // the endpoint did not answer a quick check
	Warnings    []string
}

// Render draws the banner.
func (b Banner) Render(st Style, width int) string {
	var out strings.Builder
	head := st.BoldCyan("harness")
	if b.Version != "" {
		head += " " + st.Dim(b.Version)
	}
	if b.Project != "" {
		head += st.Dim("  ·  ") + b.Project
	}
	out.WriteString(head + "\n")
	model := st.Bold(b.Model)
	if b.Provider != "" {
		model += st.Dim(" via " + b.Provider)
	}
	if b.BaseURL != "" {
		model += st.Dim(" at " + b.BaseURL)
	}
	out.WriteString("  model    " + model + "\n")
	walls := b.Enforces
	if walls == "" {
		walls = DefaultEnforces(b.Backend)
	}
	backend := b.Backend
	if backend == "" {
		backend = "none"
	}
	colour := st.Green
	if backend == "none" {
		colour = st.Red
	}
	if 11+StringWidth(backend)+3+StringWidth(walls) <= width {
		out.WriteString("  sandbox  " + colour(backend) + st.Dim(" — "+walls) + "\n")
	} else {
		out.WriteString("  sandbox  " + colour(backend) + "\n")
		for _, l := range Wrap(walls, width-11) {
			out.WriteString("           " + st.Dim(l) + "\n")
		}
	}
	if b.Session != "" {
		out.WriteString("  session  " + st.Dim(b.Session) + "\n")
	}
	for _, w := range b.warnings() {
		for i, l := range Wrap(w, width-4) {
			if i == 0 {
				out.WriteString(st.Yellow("  ! ") + l + "\n")
			} else {
				out.WriteString("    " + l + "\n")
			}
		}
	}
	help := "/help for commands · \\-Enter or Ctrl-J for a new line · Esc interrupts · Ctrl-D quits"
	if StringWidth(help)+2 > width {
		help = "/help for commands · Ctrl-D quits"
	}
	out.WriteString(st.Dim("  "+help) + "\n")
	return Fit(out.String(), width)
}

func (b Banner) warnings() []string {
	var ws []string
	if b.Backend == "none" || b.Backend == "" {
		fix := "Install bubblewrap (apt install bubblewrap) or run"
		if runtime.GOOS != "linux" { // macOS's sandbox-exec is part of the system
			fix = "Run"
		}
		ws = append(ws, "No sandbox: commands run with your own rights, so every command asks first. "+
			fix+" `harness doctor` to see why no backend works.")
	}
	if b.KeyMissing {
		ws = append(ws, "No API key: set API_KEY in ~/.agents/env (or the environment) and restart.")
	}
	if b.EndpointErr != nil {
		ws = append(ws, fmt.Sprintf("The model endpoint did not answer (%v): check BASE_URL and your connection.", b.EndpointErr))
	}
	return append(ws, b.Warnings...)
}

// DefaultEnforces is the standard one-line summary of what a backend
// enforces.
func DefaultEnforces(backend string) string {
	switch backend {
	case "docker", "podman":
		return "a container with the project and nothing else of the host, write only the project and /tmp, no network; git commits work, git config and hooks are read-only"
	case "bwrap", "landlock":
		// Commits work inside; what could make git run a program does not
		// move (config, hooks).
		return "read anywhere but secrets, write only the project and /tmp, no network; git commits work, git config and hooks are read-only"
	case "seatbelt":
		return "read anywhere but secrets, write only the project, no network; .git is read-only (commit from your terminal)"
	}
	return "nothing enforced: commands can read secrets, write anywhere and use the network"
}
