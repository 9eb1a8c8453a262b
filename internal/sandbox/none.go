package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// None runs commands directly on the host. It exists only when the user asks
// for it (--sandbox none); every command then needs approval. It goes
// through the same runner as the walled backends (timeout, bounded output,
// tamper check, filtered environment), just without walls.
type None struct{ L *walls.Live }

// Backend implements Sandbox.
func (n *None) Backend() string { return BackendNone }

// Policy implements Sandbox.
func (n *None) Policy() *walls.Policy { return n.L.Policy() }

// Live implements Sandbox.
func (n *None) Live() *walls.Live { return n.L }

// Close implements Sandbox.
func (n *None) Close() error { return nil }

// Run implements Sandbox.
func (n *None) Run(ctx context.Context, c Cmd) (*Result, error) {
	s := &instance{name: BackendNone, live: n.L, tree: treeGroup, wrap: func(script, _ string) ([]string, []string, error) {
		return []string{shellPath(), "-c", script}, n.L.Policy().Env(), nil
	}}
	return s.Run(ctx, c)
}

func shellPath() string {
	if runtime.GOOS == "windows" {
		if p := os.Getenv("ComSpec"); p != "" {
			return filepath.Clean(p)
		}
	}
	return "/bin/sh"
}
