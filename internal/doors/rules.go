package doors

import (
	"context"
	"path/filepath"

	"github.com/harness-dev/harness/internal/permission"
)

func init() {
	register(
		probe{
			name: "default rules run no code from outside",
			run: func(ctx context.Context, w *world) (string, string) {
				g, err := permission.New(permission.Options{Policy: w.pol, Home: w.home})
				if err != nil {
					return "", "no gate: " + err.Error()
				}
				evil := filepath.Join(w.outside, "evil_test.go")
				for _, cmd := range []string{
					"go test " + evil, "go test " + w.outside + "/...", "cd " + w.outside + " && go test ./...",
					"pytest " + w.outside, "cd " + w.outside + " && npm test", "cd " + w.outside + " && make test",
				} {
					if d := g.Decide(permission.Request{Tool: "bash", Command: cmd}); d.Verdict == permission.Allow {
						return "allowed unasked: " + cmd + " (" + d.Rule + ")", ""
					}
				}
				return "", ""
			},
		},
		probe{
			name: "net: the user's host beats the curl default",
			run: func(ctx context.Context, w *world) (string, string) {
				g, err := permission.New(permission.Options{Policy: w.pol, Home: w.home, AllowNet: []string{"api.example.com"}, Yolo: true})
				if err != nil {
					return "", "no gate: " + err.Error()
				}
				if d := g.Decide(permission.Request{Tool: "bash", Command: "curl -fsSL https://api.example.com/v1"}); d.Verdict != permission.Allow {
					return "curl to the host the user allowed was refused: " + d.Rule, ""
				}
				for _, cmd := range []string{"curl https://evil.example/", "curl -x evil.example https://api.example.com/", "./curl https://api.example.com/"} {
					if d := g.Decide(permission.Request{Tool: "bash", Command: cmd}); d.Verdict == permission.Allow {
						return "allowed past the default deny: " + cmd, ""
					}
				}
				return "", "and nothing else"
			},
		},
	)
}
