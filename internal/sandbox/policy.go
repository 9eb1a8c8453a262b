package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Policy is the set of walls for one session.
type Policy struct {
	Project     string        // canonical project root
	Writable    []string      // writable roots: Project first, then --add-dir roots
	ReadOnly    []string      // carve-outs inside writable roots
	DenyRead    []string      // secrets: never readable
	EnvAllow    []string      // names of environment variables passed through
	Timeout     time.Duration // default per-command timeout
	OutputLimit int           // bytes of output kept per command
	TempDir     string        // host path of the session's private /tmp
}

// PolicyOptions are the inputs of NewPolicy.
type PolicyOptions struct {
	Project string
	AddDirs []string
	Home    string
	Timeout time.Duration
}

// NewPolicy computes the policy for a project.
func NewPolicy(o PolicyOptions) (*Policy, error) {
	proj, err := filepath.EvalSymlinks(o.Project)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", o.Project, err)
	}
	proj, err = filepath.Abs(proj)
	if err != nil {
		return nil, err
	}
	if proj == "/" || proj == filepath.Clean(o.Home) {
		return nil, fmt.Errorf("refusing project root %s: pick a project directory with --project", proj)
	}
	p := &Policy{
		Project:     proj,
		Writable:    []string{proj},
		Timeout:     o.Timeout,
		OutputLimit: 1 << 20,
		EnvAllow:    []string{"PATH", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "TZ", "GOPATH", "GOROOT"},
	}
	if p.Timeout == 0 {
		p.Timeout = 60 * time.Second
	}
	for _, d := range o.AddDirs {
		d, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		p.Writable = append(p.Writable, d)
	}
	if o.Home != "" {
		for _, s := range []string{".ssh", ".aws", ".gnupg", ".config/gh", ".kube", ".docker", ".netrc", ".git-credentials", ".agents/env"} {
			p.DenyRead = append(p.DenyRead, filepath.Join(o.Home, s))
		}
	}
	p.ReadOnly = append(p.ReadOnly, filepath.Join(proj, ".git"), filepath.Join(proj, ".agents"))
	return p, nil
}

func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(os.PathSeparator))
}

// CheckRead refuses secrets.
func (p *Policy) CheckRead(path string) error {
	abs := resolve(path)
	for _, d := range p.DenyRead {
		if within(abs, d) {
			return fmt.Errorf("%s is a protected secret path; harness never reads it", path)
		}
	}
	return nil
}

// CheckWrite refuses paths outside the writable roots or inside a carve-out.
func (p *Policy) CheckWrite(path string) error {
	abs := resolve(path)
	for _, r := range p.ReadOnly {
		if within(abs, r) {
			return fmt.Errorf("%s is read-only (protected by the sandbox policy)", path)
		}
	}
	for _, w := range p.Writable {
		if within(abs, w) {
			return nil
		}
	}
	return fmt.Errorf("%s is outside the project (%s): only the project is writable", path, p.Project)
}

// resolve returns the absolute path with every existing symlink resolved.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
