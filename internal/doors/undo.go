package doors

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func init() {
	register(
		probe{
			name: "undo: a directory swapped for a link out",
			live: true,
			run: func(ctx context.Context, w *world) (string, string) {
				sb, err := sandbox.Open(ctx, walls.NewLive(w.pol), w.backend, w.opts...)
				if err != nil {
					return "", "no sandbox: " + err.Error()
				}
				defer sb.Close()
				// What a guess of the outside looks like: undo would
				// delete f and write g there if it followed the link.
				for _, n := range []string{"f", "g"} {
					os.WriteFile(filepath.Join(w.outside, n), []byte("known\n"), 0o644)
				}
				before := snapshot(w.outside)
				journal := filepath.Join(w.base, "store", "s.jsonl")
				store, err := checkpoint.Open(journal, w.project)
				if err != nil {
					return "", "no checkpoint store: " + err.Error()
				}
				run := func(script string) string {
					end := store.Begin(fmt.Sprint(time.Now().UnixNano()), "bash")
					defer end()
					r, err := sb.Run(ctx, sandbox.Cmd{Script: script, Timeout: 20 * time.Second})
					if err != nil {
						return err.Error()
					}
					if r.ExitCode != 0 {
						return string(r.Output)
					}
					return ""
				}
				store.StartTurn()
				if msg := run("mkdir d && echo old > d/g"); msg != "" {
					return "", "the setup command failed: " + msg
				}
				store.StartTurn()
				if msg := run("echo known > d/f && echo known > d/g"); msg != "" {
					return "", "the setup command failed: " + msg
				}
				// The accomplice: between calls, as a background job would.
				os.Rename(filepath.Join(w.project, "d"), filepath.Join(w.project, "d.real"))
				os.Symlink(w.outside, filepath.Join(w.project, "d"))
				res, err := checkpoint.Undo(journal, checkpoint.Selection{FromTurn: 2}, checkpoint.Options{Force: true})
				if err != nil {
					return "", "undo failed: " + err.Error()
				}
				if p := changed(before, snapshot(w.outside)); p != "" {
					return "undo " + p + " outside the project through the link", ""
				}
				if len(res.Refused) == 0 {
					return "undo did not say what it refused", ""
				}
				return "", ""
			},
		},
	)
}

// snapshot maps each file under dir to its content.
func snapshot(dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// changed says how after differs from before ("" when it does not).
func changed(before, after map[string]string) string {
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			return "deleted " + filepath.Base(p)
		case a != b:
			return "rewrote " + filepath.Base(p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			return "created " + filepath.Base(p)
		}
	}
	return ""
}

// holds returns a file under dir whose bytes contain needle.
func holds(dir, needle string) string {
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(needle)) {
			found = p
		}
		return nil
	})
	return found
}
