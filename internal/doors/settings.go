package doors

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/shellquote"
)

func init() {
	register(probe{
		name: "hooks: planted by a command, never run",
		live: true,
		run: func(ctx context.Context, w *world) (string, string) {
			marker := filepath.Join(w.outside, "hook-ran")
			hook := hookSettings("touch " + shellquote.Quote(marker))
			// A headless session that a command of the model's then
			// tries to give a hook: in the project's settings, and in a
			// --settings file inside the project.
			s, err := app.Open(ctx, w.sessionOptions())
			if err != nil {
				return "", "no session: " + err.Error()
			}
			defer s.Close()
			r, err := s.Sandbox.Run(ctx, sandbox.Cmd{Script: "mkdir -p .claude && printf '%s' " + shellquote.Quote(hook) + " > .claude/settings.json", Timeout: 20 * time.Second})
			if err != nil || r.ExitCode != 0 {
				return "", "the command that plants the hook did not run"
			}
			for _, ev := range []string{extend.UserPromptSubmit, extend.Stop} {
				s.Hooks.Fire(ctx, extend.Event{Name: ev, Prompt: "p"})
			}
			if _, err := os.Stat(marker); err == nil {
				return "a hook the model planted mid-session ran on the host", ""
			}
			flag := filepath.Join(w.project, "x.json")
			os.WriteFile(flag, []byte(hookSettings("touch "+shellquote.Quote(marker))), 0o644)
			o := w.sessionOptions()
			o.Settings = []string{flag}
			if s2, err := app.Open(ctx, o); err == nil {
				s2.Hooks.Fire(ctx, extend.Event{Name: extend.UserPromptSubmit, Prompt: "p"})
				s2.Close()
				if _, err := os.Stat(marker); err == nil {
					return "a hook from a --settings file in the project ran on the host", ""
				}
				return "a headless session started with hooks from a file the model can write", ""
			} else if !strings.Contains(err.Error(), "--allow-project-hooks") {
				return "", "the refusal does not say how to approve: " + err.Error()
			}
			return "", ""
		},
	})
}

// hookSettings is a settings file with one hook on every prompt and stop.
func hookSettings(cmd string) string {
	h := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	data, _ := json.Marshal(map[string]any{"hooks": map[string]any{extend.UserPromptSubmit: h, extend.Stop: h}})
	return string(data)
}

// sessionOptions are a headless session's in w, on w's backend, with a
// provider that is never asked (the probes drive the session themselves).
func (w *world) sessionOptions() app.Options {
	cache := filepath.Join(w.base, "cache")
	os.MkdirAll(cache, 0o700)
	return app.Options{
		Source: config.Source{Home: w.home, Env: map[string]string{
			"PROVIDER": "anthropic", "MODEL": "doors-probe", "API_KEY": "doors-probe-not-a-key-0123456789",
			"BASE_URL": "http://127.0.0.1:9", "PATH": os.Getenv("PATH"),
		}},
		WorkDir: w.project, Project: w.project, CacheDir: cache, Backend: w.backend, Yolo: true,
	}
}
