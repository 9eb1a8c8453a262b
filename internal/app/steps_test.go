package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/sessionlog"
)

// TestStepsInOrder runs Open's steps one at a time on a resumed session
// and checks that each adds what its name says, and that nothing a later
// step adds is there before it: the steps are testable alone, and their
// order is the only coupling between them.
func TestStepsInOrder(t *testing.T) {
	o := testOptions(t)
	savedSession(t, o)
	// Instructions that appeared since: the resumed prompt differs, so
	// logPrompt logs it again.
	if err := os.WriteFile(filepath.Join(o.WorkDir, "AGENTS.md"), []byte("Be brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Continue = true

	b := newBuilder(o)
	defer b.s.Close()
	// What each step adds, read off the builder.
	added := map[string]func() bool{
		"loadConfig":     func() bool { return b.s.Config != nil },
		"resolveProject": func() bool { return b.project == o.WorkDir },
		"openSandbox":    func() bool { return b.s.Sandbox != nil && b.live != nil && b.s.Proxy != nil },
		"openLog":        func() bool { return b.s.Log != nil && b.s.Resumed && len(b.entries) > 0 },
		"newGate":        func() bool { return b.s.Gate != nil },
		"startMCP":       func() bool { return b.s.MCP != nil },
		"buildTools":     func() bool { return b.s.Registry != nil && b.reminder != nil && b.s.Todos != nil },
		"newProvider":    func() bool { return b.s.Provider != nil },
		"newHistory":     func() bool { return b.s.History != nil },
		"loadExtensions": func() bool { return b.s.Modes != nil && b.s.Commands != nil && b.s.Hooks != nil },
		"buildAgent":     func() bool { return b.s.Agent != nil && b.system != "" },
		"logPrompt":      func() bool { return b.s.Log != nil && prompts(t, b.s.Log.Path()) == 2 },
		"restore":        func() bool { return b.s.History != nil && b.s.History.Len() == 2 },
		"startHooks":     func() bool { return startHooksRan(b.s) },
	}
	steps := b.steps()
	if len(steps) != len(added) {
		t.Fatalf("%d steps, %d checked", len(steps), len(added))
	}
	for i, st := range steps {
		check, ok := added[st.name]
		if !ok {
			t.Fatalf("step %s is not checked", st.name)
		}
		for _, later := range steps[i:] {
			if later.name != "resolveProject" && added[later.name]() { // b.project is compared, not set
				t.Fatalf("before step %s, what %s adds is already there", st.name, later.name)
			}
		}
		if err := st.run(context.Background()); err != nil {
			t.Fatalf("step %s: %v", st.name, err)
		}
		if !check() {
			t.Fatalf("step %s did not add what its name says", st.name)
		}
	}
}

// prompts counts the prompt entries of the log at path.
func prompts(t *testing.T, path string) int {
	t.Helper()
	es, err := sessionlog.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Type == sessionlog.TypePrompt {
			n++
		}
	}
	return n
}

// startHooksRan reports whether SessionStart was fired: its SessionEnd
// cleanup is the last one registered.
func startHooksRan(s *Session) bool { return s.endArmed }
