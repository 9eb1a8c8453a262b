package walls

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvExactNamesOnly(t *testing.T) {
	base := t.TempDir()
	p, err := NewPolicy(PolicyOptions{Project: base, Environ: []string{
		"LC_ALL=C.UTF-8", "LC_CTYPE=C", "LC_EVIL=$(curl x)", "LC_=x", "LC_ALLX=y", "PATH=/bin",
	}})
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(p.env, "\n")
	for _, bad := range []string{"LC_EVIL", "LC_=", "LC_ALLX"} {
		if strings.Contains(env, bad) {
			t.Errorf("%s passed: %v", bad, p.env)
		}
	}
	for _, good := range []string{"LC_ALL=C.UTF-8", "LC_CTYPE=C", "PATH=/bin"} {
		if !strings.Contains(env, good) {
			t.Errorf("%s did not pass: %v", good, p.env)
		}
	}
}

func TestHiddenPaths(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	spill := filepath.Join(home, ".cache", "harness", "spill")
	files := []string{
		".config/git/credentials", ".claude/.credentials.json", ".codex/auth.json",
		".config/github-copilot/hosts.json", ".cache/huggingface/token", ".bash_history",
		".zsh_history", ".agents/sessions/p/log.jsonl", "custom/secret", "notes.txt",
		".cache/harness/spill/other/1.txt", ".cache/harness/spill/mine/1.txt",
	}
	for _, f := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755)
		os.WriteFile(filepath.Join(home, f), []byte("x"), 0o644)
	}
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(home, HiddenListFile), []byte("# mine\n~/custom\n\n~\n"), 0o644)
	p, err := NewPolicy(PolicyOptions{Project: proj, Home: home, Hide: []string{spill}, Keep: []string{filepath.Join(spill, "mine")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		err := p.CheckRead(filepath.Join(home, f))
		want := f != "notes.txt" && !strings.Contains(f, "/mine/")
		var de *DeniedError
		if got := errors.As(err, &de); got != want {
			t.Errorf("%s: denied %v, want %v (%v)", f, got, want, err)
		}
	}
	if err := p.CheckRead(home); err != nil {
		t.Errorf("a bare ~ in the hidden list hid the whole home: %v", err)
	}
}

func TestRefreshFindsRepositoriesMadeMidSession(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	pol, err := NewPolicy(PolicyOptions{Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	if f := l.Refresh(); len(f) != 0 {
		t.Fatalf("nothing new yet, found %v", f)
	}
	write := func(rel, text string) {
		t.Helper()
		path := filepath.Join(proj, rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A repository with a filter and a hook, a pointer to a separate
	// gitdir, a bare-shaped directory and a missing hooks path.
	write("new/.git/HEAD", "ref: refs/heads/main\n")
	write("new/.git/config", "[filter \"x\"]\n\tclean = sh -c evil\n[core]\n\tfsmonitor = evil\n\thooksPath = myhooks\n")
	write("new/.git/hooks/pre-commit", "#!/bin/sh\nevil\n")
	write("sep/.git", "gitdir: ../elsewhere\n")
	write("elsewhere/HEAD", "ref: refs/heads/main\n")
	write("elsewhere/config", "[alias]\n\tx = !evil\n")
	write("bare/HEAD", "ref: refs/heads/main\n")
	write("bare/config", "[core]\n\tbare = true\n")
	os.MkdirAll(filepath.Join(proj, "bare", "objects"), 0o755)

	found := l.Refresh()
	got := map[string]Finding{}
	for _, f := range found {
		got[strings.TrimPrefix(f.Path, proj+"/")] = f
	}
	for rel, kind := range map[string]string{
		"new/.git": "repository", "new/myhooks": "hooks path", "sep/.git": "gitdir pointer",
		"elsewhere": "separate gitdir|bare repository", "bare": "bare repository",
	} {
		// elsewhere is walked before sep: seen first as bare-shaped.
		f, ok := got[rel]
		if !ok || !strings.Contains("|"+kind+"|", "|"+f.Kind+"|") {
			t.Errorf("%s: found %+v, want a %s (all: %v)", rel, f, kind, found)
		}
	}
	if rc := strings.Join(got["new/.git"].RunsCode, " "); !strings.Contains(rc, "filter.x.clean") || !strings.Contains(rc, "core.fsmonitor") || !strings.Contains(rc, "core.hookspath") {
		t.Errorf("new/.git runs code: %q", rc)
	}
	if rc := strings.Join(got["elsewhere"].RunsCode, " "); !strings.Contains(rc, "alias.x") {
		t.Errorf("elsewhere runs code: %q", rc)
	}
	if st, err := os.Stat(filepath.Join(proj, "new", "myhooks")); err != nil || !st.IsDir() {
		t.Errorf("the missing hooks path was not created to be mounted read-only: %v", err)
	}
	for _, rel := range []string{"new/.git/config", "new/myhooks/pre-commit", "sep/.git", "elsewhere/config", "bare/config", "bare/hooks/x"} {
		if err := l.Policy().CheckWrite(filepath.Join(proj, rel)); err == nil {
			t.Errorf("%s is writable after Refresh", rel)
		}
		if _, err := l.WriteFile(filepath.Join(proj, rel), []byte("x")); err == nil {
			t.Errorf("WriteFile wrote %s", rel)
		}
	}
	if len(l.Refresh()) != 0 {
		t.Error("a second Refresh found the same paths again")
	}
	if n := len(l.Policy().Findings()); n != len(found) {
		t.Errorf("Findings has %d, want %d", n, len(found))
	}
}

func TestWriteFileRefusesNewGitByName(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "proj")
	os.MkdirAll(filepath.Join(proj, "d", "objects"), 0o755)
	os.WriteFile(filepath.Join(proj, "d", "HEAD"), []byte("x"), 0o644)
	pol, err := NewPolicy(PolicyOptions{Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	for _, rel := range []string{"x/.git", "x/.git/config", "d/config"} {
		if _, err := l.WriteFile(filepath.Join(proj, rel), []byte("gitdir: /tmp\n")); err == nil {
			t.Errorf("wrote %s", rel)
		}
	}
	r, err := l.WriteFile(filepath.Join(proj, "a", "b", "c.txt"), []byte("ok"))
	if got, _ := os.ReadFile(filepath.Join(proj, "a", "b", "c.txt")); err != nil || !r.Created || string(got) != "ok" {
		t.Errorf("an ordinary write: %+v %v", r, err)
	}
	os.Chmod(filepath.Join(proj, "a", "b", "c.txt"), 0o600)
	r, err = l.WriteFile(filepath.Join(proj, "a", "b", "c.txt"), []byte("again"))
	if fi, _ := os.Stat(filepath.Join(proj, "a", "b", "c.txt")); err != nil || r.Created || fi.Mode().Perm() != 0o600 {
		t.Errorf("an overwrite: %+v %v, mode %v", r, err, fi.Mode())
	}
}

func TestReadFileRefusals(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	p, err := NewPolicy(PolicyOptions{Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(proj, "big")
	f, _ := os.Create(big)
	f.Truncate(2 << 30)
	f.Close()
	var se *SizeError
	if _, _, err := p.ReadFile(big, 64<<20); !errors.As(err, &se) || se.Size != 2<<30 {
		t.Errorf("2 GB sparse file: %v", err)
	}
	if _, _, err := p.ReadFile(proj, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	os.WriteFile(filepath.Join(proj, "ok"), []byte("hello"), 0o644)
	if b, real, err := p.ReadFile(filepath.Join(proj, "ok"), 1<<20); err != nil || string(b) != "hello" || real != filepath.Join(proj, "ok") {
		t.Errorf("ordinary read: %q %s %v", b, real, err)
	}
}
