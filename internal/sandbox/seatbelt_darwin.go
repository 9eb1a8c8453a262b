package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

const sandboxExec = "/usr/bin/sandbox-exec"

func detect() (string, string) {
	if _, err := os.Stat(sandboxExec); err == nil {
		return BackendSeatbelt, "macOS Seatbelt (" + sandboxExec + ") is available"
	}
	return "", sandboxExec + " is missing"
}

func openBackend(name string, p *Policy, tmp string) (Sandbox, error) {
	switch name {
	case BackendSeatbelt:
	case BackendBwrap, BackendLandlock:
		return nil, fmt.Errorf("%w: %s is Linux only; use seatbelt on macOS", ErrUnavailable, name)
	default:
		return nil, fmt.Errorf("unknown sandbox backend %q: use auto, bwrap, landlock, seatbelt or none", name)
	}
	if _, err := exec.LookPath(sandboxExec); err != nil {
		return nil, fmt.Errorf("%w: %s not found", ErrUnavailable, sandboxExec)
	}
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r // /tmp and /var are symlinks into /private
	}
	profile, params := seatbeltProfile(p, tmp)
	args := []string{sandboxExec, "-p", profile}
	for _, kv := range params {
		args = append(args, "-D", kv)
	}
	env := sandboxEnv(p, tmp, BackendSeatbelt)
	s := &instance{name: BackendSeatbelt, pol: p, tmp: tmp, tree: treeGroup}
	s.wrap = func(script, _ string) ([]string, []string, error) {
		return append(append([]string(nil), args...), "/bin/sh", "-c", script), env, nil
	}
	return s, nil
}
