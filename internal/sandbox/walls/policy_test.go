package walls

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// policyFixture builds a project with a repository, a nested one, a
// worktree-style pointer, a hooksPath inside the project and a few links.
func policyFixture(t testing.TB) (p *Policy, proj, home, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj = filepath.Join(base, "proj")
	home = filepath.Join(base, "home")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{
		proj + "/.git/hooks", proj + "/sub/.git/hooks", proj + "/src", proj + "/githooks",
		base + "/wt-gitdir", home + "/.ssh", outside,
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		proj + "/.git/config":      "[core]\n\thooksPath = githooks\n",
		proj + "/.git/HEAD":        "ref: refs/heads/main\n",
		proj + "/wt/.git":          "gitdir: " + base + "/wt-gitdir\n",
		base + "/wt-gitdir/HEAD":   "x",
		home + "/.ssh/id_rsa":      "secret",
		home + "/.netrc":           "secret",
		proj + "/src/main.go":      "package main",
		outside + "/file":          "x",
		proj + "/.agents/settings": "{}",
	}
	for f, c := range files {
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		proj + "/link-out":     outside,
		proj + "/dangling":     outside + "/new-file",
		proj + "/link-git":     proj + "/.git",
		proj + "/link-ssh":     home + "/.ssh/id_rsa",
		proj + "/src/up":       "../..",
		proj + "/link-to-self": proj + "/src",
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	p, err = NewPolicy(PolicyOptions{Project: proj, Home: home, Environ: []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-x", "LC_TOKEN=x", "LANG=C", "GITHUB_TOKEN=x", "HOME=/h"}})
	if err != nil {
		t.Fatal(err)
	}
	return p, proj, home, outside
}

func TestCheckWrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	p, proj, home, outside := policyFixture(t)
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"a project file", proj + "/src/main.go", true},
		{"a new project file", proj + "/src/new/deep.go", true},
		{"a symlink that stays inside", proj + "/link-to-self/x.go", true},
		{"the project root's parent", filepath.Dir(proj) + "/x", false},
		{"dot-dot out", proj + "/src/../../outside/file", false},
		{"a symlink out", proj + "/link-out/file", false},
		{"a dangling symlink out", proj + "/dangling", false},
		{"a symlink then dot-dot", proj + "/link-out/../escaped", false},
		{"a symlink up and out", proj + "/src/up/outside/file", false},
		{".git config", proj + "/.git/config", false},
		{".git hooks", proj + "/.git/hooks/pre-commit", false},
		{".git through a symlink", proj + "/link-git/config", false},
		{"nested .git", proj + "/sub/.git/hooks/pre-commit", false},
		{"a .git created later", proj + "/new/.git/config", false},
		{"a worktree pointer", proj + "/wt/.git", false},
		{"core.hooksPath target", proj + "/githooks/pre-commit", false},
		{".agents", proj + "/.agents/settings", false},
		{"/proc/self/root", "/proc/self/root" + proj + "/src/main.go", false},
		{"/etc", "/etc/passwd", false},
		{"home", home + "/.bashrc", false},
		{"a secret", home + "/.ssh/id_rsa", false},
		{"outside", outside + "/file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.CheckWrite(tt.path)
			if (err == nil) != tt.ok {
				t.Errorf("CheckWrite(%s) = %v, want ok=%v", tt.path, err, tt.ok)
			}
		})
	}
}

func TestCheckRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	p, proj, home, _ := policyFixture(t)
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"a project file", proj + "/src/main.go", true},
		{"a system file", "/etc/hostname", true},
		{".git is readable", proj + "/.git/config", true},
		{"~/.ssh", home + "/.ssh/id_rsa", false},
		{"~/.ssh itself", home + "/.ssh", false},
		{"~/.netrc", home + "/.netrc", false},
		{"a symlink to a secret", proj + "/link-ssh", false},
		{"dot-dot to a secret", proj + "/../home/.ssh/id_rsa", false},
		{"the harness's environment", "/proc/self/environ", false},
		{"another process's root", "/proc/1/root/etc/passwd", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.CheckRead(tt.path)
			if (err == nil) != tt.ok {
				t.Errorf("CheckRead(%s) = %v, want ok=%v", tt.path, err, tt.ok)
			}
		})
	}
}

func TestPolicyCarveOutsAndEnv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	p, proj, _, _ := policyFixture(t)
	base := filepath.Dir(proj)
	for _, want := range []string{proj + "/.git", proj + "/sub/.git", proj + "/wt/.git", base + "/wt-gitdir", proj + "/githooks", proj + "/.agents"} {
		found := false
		for _, r := range p.readOnly {
			found = found || r == want
		}
		if !found {
			t.Errorf("ReadOnly lacks %s: %v", want, p.readOnly)
		}
	}
	env := strings.Join(p.env, "\n")
	for _, bad := range []string{"API_KEY", "LC_TOKEN", "GITHUB_TOKEN"} {
		if strings.Contains(env, bad) {
			t.Errorf("environment passes %s: %v", bad, p.env)
		}
	}
	for _, good := range []string{"PATH=/bin", "LANG=C", "HOME=/h"} {
		if !strings.Contains(env, good) {
			t.Errorf("environment lacks %s: %v", good, p.env)
		}
	}
}

func TestNewPolicyRefuses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	os.MkdirAll(home+"/proj", 0o755)
	linked := filepath.Join(base, "linked")
	os.MkdirAll(linked, 0o755)
	os.MkdirAll(base+"/real-git", 0o755)
	os.Symlink(base+"/real-git", linked+"/.git")
	agents := filepath.Join(base, "agents-link")
	os.MkdirAll(agents, 0o755)
	os.Symlink(base, agents+"/.agents")
	tests := []struct{ name, project, want string }{
		{"the root", "/", "refusing"},
		{"home", home, "refusing"},
		{"an ancestor of home", base, "refusing"},
		{"a system directory", "/etc", "refusing"},
		{"/usr", "/usr", "refusing"},
		{"a symlinked .git", linked, "symlink"},
		{"a symlinked .agents", agents, "symlink"},
		{"missing", base + "/nope", "no such file"},
		{"empty", "", "--project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPolicy(PolicyOptions{Project: tt.project, Home: home})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewPolicy(%q) = %v, want an error containing %q", tt.project, err, tt.want)
			}
		})
	}
	if _, err := NewPolicy(PolicyOptions{Project: home + "/proj", Home: home}); err != nil {
		t.Errorf("a project inside home: %v", err)
	}
}

func TestResolve(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(base+"/a/b", 0o755)
	os.Symlink(base+"/a/b", base+"/l1")
	os.Symlink("l1", base+"/l2")
	os.Symlink("../../x", base+"/a/b/up")
	os.Symlink("loop", base+"/loop")
	tests := map[string]string{
		base + "/l2/c":         base + "/a/b/c",
		base + "/l2/../z":      base + "/a/z",
		base + "/a/b/up/y":     base + "/x/y",
		base + "/missing/../a": base + "/a",
	}
	for in, want := range tests {
		if got := resolve(in); got != want {
			t.Errorf("resolve(%s) = %s, want %s", in, got, want)
		}
	}
	_ = resolve(base + "/loop/x") // must terminate
}

// A project without .agents gets an empty one, so it is mounted read-only
// from the first command: a command cannot create it and plant permission
// rules for the next session. Extra writable roots are left alone.
func TestPolicyCreatesAgentsDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, extra := filepath.Join(base, "proj"), filepath.Join(base, "extra")
	for _, d := range []string{proj, extra, filepath.Join(base, "home")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPolicy(PolicyOptions{Project: proj, AddDirs: []string{extra}, Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(proj, ".agents")); err != nil || !fi.IsDir() {
		t.Fatalf("project .agents not created: %v", err)
	}
	if _, err := os.Stat(filepath.Join(extra, ".agents")); err == nil {
		t.Error(".agents created in an --add-dir root")
	}
	if err := p.CheckWrite(filepath.Join(proj, ".agents", "permissions")); err == nil {
		t.Error("the new .agents is writable")
	}
	found := false
	for _, r := range p.readOnly {
		found = found || r == filepath.Join(proj, ".agents")
	}
	if !found {
		t.Errorf("ReadOnly lacks the new .agents: %v", p.readOnly)
	}
}

// TestPolicyEnvironIsInput: the host environment reaches the policy only
// as PolicyOptions.Environ; the process's own variables are not read.
func TestPolicyEnvironIsInput(t *testing.T) {
	mod := t.TempDir()
	t.Setenv("GOMODCACHE", mod)
	t.Setenv("HARNESS_TEST_PASSES", "x")
	p, err := NewPolicy(PolicyOptions{Project: t.TempDir(), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p.hostModCache != "" {
		t.Errorf("no Environ given, yet the host's GOMODCACHE %s was read", p.hostModCache)
	}
	p, err = NewPolicy(PolicyOptions{Project: t.TempDir(), Home: t.TempDir(), Environ: []string{"GOMODCACHE=" + mod}})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := canonical(mod); p.hostModCache != want {
		t.Errorf("Environ's GOMODCACHE: got %q, want %q", p.hostModCache, want)
	}
}
