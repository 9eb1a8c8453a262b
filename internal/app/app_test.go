package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
)

// testOptions is a configured user with a home and a project, nothing
// read from this process's environment.
func testOptions(t *testing.T) Options {
	t.Helper()
	home := t.TempDir()
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{
		Source: config.Source{Home: home, Env: map[string]string{
			"PROVIDER": "anthropic", "MODEL": "fake-model", "API_KEY": "sk-app-test-not-a-key-0123456789",
			"BASE_URL": "http://127.0.0.1:9", "PATH": os.Getenv("PATH"),
		}},
		WorkDir:  proj,
		CacheDir: cacheDir(t),
		Now:      func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) },
		Backend:  sandbox.BackendNone,
	}
}

// cacheDir is a cache directory outside /tmp, so spill files go under it.
func cacheDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "harness-app-test-")
	if err != nil {
		t.Fatalf("no writable /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestOpenNewSession: a new session is wired from Options alone: the
// project from the working directory, the clock in the log's name and
// its entries' times, the key from the given environment redacted, the
// spill directory under the given cache directory and removed on Close.
func TestOpenNewSession(t *testing.T) {
	o := testOptions(t)
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox.Policy().Project() != o.WorkDir || s.Resumed || s.ID == "" {
		t.Errorf("project %s resumed %v id %q", s.Sandbox.Policy().Project(), s.Resumed, s.ID)
	}
	if !strings.Contains(filepath.Base(s.Log.Path()), "20260304") {
		t.Errorf("log %s is not named by the given clock", s.Log.Path())
	}
	if !strings.HasPrefix(s.Log.Path(), o.Source.Home) {
		t.Errorf("log %s is not under the given home", s.Log.Path())
	}
	spill := filepath.Join(o.CacheDir, "harness", "spill", s.ID)
	if _, err := os.Stat(spill); err != nil || s.History.Config().SpillDir != spill {
		t.Errorf("spill directory %s: %v", s.History.Config().SpillDir, err)
	}
	m := llm.Text(llm.RoleUser, "key sk-app-test-not-a-key-0123456789")
	if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeMessage, Message: &m}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, _ := os.ReadFile(s.Log.Path())
	if strings.Contains(string(raw), "sk-app-test") || !strings.Contains(string(raw), "[REDACTED]") {
		t.Errorf("the key from Options' environment was not redacted:\n%s", raw)
	}
	// The log's entries carry the given clock's time, not the machine's.
	es, err := sessionlog.ReadFile(s.Log.Path())
	if err != nil || len(es) < 2 {
		t.Fatalf("the log reads %d entries: %v", len(es), err)
	}
	for _, e := range es {
		if !e.Time.Equal(o.now()) {
			t.Errorf("%s entry stamped %v, want the given clock's %v", e.Type, e.Time, o.now())
		}
	}
	if _, err := os.Stat(spill); !os.IsNotExist(err) {
		t.Errorf("spill directory left after Close: %v", err)
	}
}

// TestOpenFailsUndoes: a step that fails closes what the steps before it
// opened. Here the last step fails (headless, hooks from a --settings file
// the model can write are refused), after the spill directory was made.
func TestOpenFailsUndoes(t *testing.T) {
	o := testOptions(t)
	flag := filepath.Join(o.WorkDir, "x.json")
	os.WriteFile(flag, []byte(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"true"}]}]}}`), 0o644)
	o.Settings = []string{flag}
	if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--allow-project-hooks") {
		t.Fatalf("Open = %v, want the hooks step's refusal", err)
	}
	if left, _ := filepath.Glob(filepath.Join(o.CacheDir, "harness", "spill", "*")); len(left) != 0 {
		t.Errorf("the failed Open left %v", left)
	}

	o = testOptions(t)
	o.Source.Env["PROVIDER"], o.Source.Env["MODEL"] = "", ""
	if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Fatalf("unconfigured: %v", err)
	}
}

// TestOpenResume: a session written and resumed comes back with its
// history and id.
func TestOpenResume(t *testing.T) {
	o := testOptions(t)
	id := savedSession(t, o)
	o.Continue = true
	r, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Resumed || r.ID != id || r.History.Len() != 2 {
		t.Fatalf("resumed %v id %s (want %s) messages %d", r.Resumed, r.ID, id, r.History.Len())
	}
}

// savedSession opens a session for o, says hello in it and closes it,
// returning its id.
func savedSession(t *testing.T, o Options) string {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A prompt and the model's reply: a session whose first request got no
	// reply is no conversation to continue (sessionlog.Summary.Started).
	for _, m := range []llm.Message{llm.Text(llm.RoleUser, "hello"), llm.Text(llm.RoleAssistant, "hi")} {
		s.History.Append(m)
		if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	return s.ID
}

// TestProjectRoot: the flag, else the git root of the working directory,
// else the working directory; a relative flag is taken from WorkDir.
func TestProjectRoot(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	if got, err := ProjectRoot(context.Background(), "", sub); err != nil || got != sub {
		t.Errorf("no git: %s %v", got, err)
	}
	if got, err := ProjectRoot(context.Background(), "b", filepath.Join(dir, "a")); err != nil || got != sub {
		t.Errorf("relative flag: %s %v", got, err)
	}
	if _, err := ProjectRoot(context.Background(), filepath.Join(dir, "missing"), dir); err == nil {
		t.Error("a missing project was accepted")
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if got, err := ProjectRoot(context.Background(), "", sub); err != nil || got != dir {
		t.Errorf("git root: %s %v, want %s", got, err, dir)
	}
}

// TestSpillDirAvoidsTmp: a cache directory under /tmp would be hidden by
// the sandbox's private /tmp: spill files then go to a fresh private
// directory under this user's base in /var/tmp; one outside /tmp is used
// as is.
func TestSpillDirAvoidsTmp(t *testing.T) {
	dir, err := spillDir(filepath.Join(t.TempDir(), "cache"), "abc")
	if err != nil {
		t.Fatalf("no writable /var/tmp: %v", err)
	}
	defer os.RemoveAll(dir)
	base := fmt.Sprintf("/var/tmp/harness-spill-%d/", os.Getuid())
	if underTmp(dir) || !strings.HasPrefix(dir, base+"abc-") {
		t.Errorf("spill dir %s", dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("spill dir mode: %v %v", fi.Mode(), err)
	}
	cache := "/var/tmp/harness-test-cache-" + t.Name()
	defer os.RemoveAll(cache)
	if dir, err := spillDir(cache, "abc"); err != nil || dir != cache+"/harness/spill/abc" {
		t.Errorf("a cache dir outside /tmp is used as is: %s %v", dir, err)
	}
	if dir, err := spillDir("", "abc"); err != nil || !strings.HasPrefix(dir, base+"abc-") {
		t.Errorf("no cache dir: %s %v", dir, err)
	} else {
		os.RemoveAll(dir)
	}
}

// TestSpillCacheNotInWritableRoot: a cache directory inside the project
// (XDG_CACHE_HOME pointed there), directly or through a link, is not
// where spill directories are made: a command could plant a link in it
// and lead harness's mkdir, writes and removal outside.
func TestSpillCacheNotInWritableRoot(t *testing.T) {
	proj := t.TempDir()
	in := filepath.Join(proj, ".cache")
	link := filepath.Join(t.TempDir(), "cache")
	os.Mkdir(in, 0o755)
	os.Symlink(in, link)
	for _, c := range []string{in, link} {
		if got := spillCache(c, []string{proj}); got != "" {
			t.Errorf("spillCache(%s) = %q, want none", c, got)
		}
	}
	if got := spillCache("/var/tmp/c", []string{proj}); got != "/var/tmp/c" {
		t.Errorf("a cache outside the roots: %q", got)
	}
}

// TestSpillBaseStaysHidden: the base every session's /var/tmp spill
// directory lives in is hidden whole and never removed with a session, so
// a session ending cannot make a hidden path vanish under the sandbox of
// one starting (bwrap then fails to create its mount point).
func TestSpillBaseStaysHidden(t *testing.T) {
	dir, err := spillDir("", "abc")
	if err != nil {
		t.Fatalf("no writable /var/tmp: %v", err)
	}
	base := filepath.Dir(dir)
	os.RemoveAll(dir) // the session ends
	hidden := spillDirs("")
	if !slices.Contains(hidden, base) {
		t.Errorf("hidden %v lacks the base %s", hidden, base)
	}
	for _, h := range hidden {
		if _, err := os.Lstat(h); err != nil {
			t.Errorf("hidden path %s does not exist: %v", h, err)
		}
	}
}

// TestSpillBaseRefusesSquatter: a base made by someone else, or open to
// others, is refused rather than used.
func TestSpillBaseRefusesSquatter(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "new")
	if got, err := privateDir(good); err != nil || got != good {
		t.Fatalf("a new base: %s %v", got, err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777) // past the umask
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{open, link, file} {
		if _, err := privateDir(p); err == nil {
			t.Errorf("%s was used as a private base", p)
		}
	}
	if os.Getuid() == 0 {
		theirs := filepath.Join(dir, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := privateDir(theirs); err == nil {
			t.Error("a base owned by another user was used")
		}
	}
}

// TestSecretsFromGivenEnv: the keys to redact come from Options'
// environment, not from this process's.
func TestSecretsFromGivenEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-process-env-should-not-count")
	got := secrets(&config.Config{APIKey: "sk-config"}, map[string]string{"ANTHROPIC_API_KEY": "sk-given"})
	if strings.Join(got, ",") != "sk-config,sk-given" {
		t.Errorf("secrets = %q", got)
	}
}

// TestStrictRefusesWeakerWalls: with bwrap out of reach, auto falls back
// to the landlock backend. Where that cannot hold a rule (no user
// namespaces) the session says it is weaker and what it cannot hold, and
// strict refuses to start; where it holds them all it is not called weaker.
// On a machine with user namespaces the test runs itself again in a user
// namespace that may create none, so the weaker case is always exercised.
func TestStrictRefusesWeakerWalls(t *testing.T) {
	testenv.Slow(t)
	if strongest(runtime.GOOS) != sandbox.BackendBwrap {
		t.Skip("the fallback from bwrap to landlock is Linux's")
	}
	if inner.LandlockABI() == 0 {
		testenv.Missing(t, testenv.Landlock, "this kernel has no Landlock")
	}
	t.Setenv("PATH", pathWithout(t, "bwrap"))
	o := testOptions(t)
	o.Backend = ""
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Walls
	s.Close()
	if w.Backend != sandbox.BackendLandlock || w.Strongest != sandbox.BackendBwrap {
		t.Fatalf("walls %+v: want landlock, compared with bwrap", w)
	}
	warned := slices.IndexFunc(s.Warnings, func(n notice.Notice) bool { return n.Kind == notice.SandboxWeaker })
	o = testOptions(t)
	o.Backend = BackendStrict
	ss, strictErr := Open(context.Background(), o)
	if ss != nil {
		ss.Close()
	}
	if len(w.CannotHold) == 0 {
		if w.Weaker || warned >= 0 || strictErr != nil {
			t.Errorf("landlock holds every rule here, yet walls %+v, warning at %d, strict: %v", w, warned, strictErr)
		}
		if os.Getenv(noUsernsEnv) == "" {
			runWithoutUserNamespaces(t, "TestStrictRefusesWeakerWalls")
		} else {
			t.Error("in a user namespace that may create none, landlock says it holds every rule")
		}
		return
	}
	if !w.Weaker {
		t.Errorf("walls %+v: cannot hold rules but not called weaker", w)
	}
	if warned < 0 || !strings.Contains(s.Warnings[warned].Text, "sandbox landlock is weaker than bwrap") {
		t.Errorf("no warning of kind %s says so: %+v", notice.SandboxWeaker, s.Warnings)
	}
	if strictErr == nil || !strings.Contains(strictErr.Error(), "--sandbox strict needs bwrap") {
		t.Fatalf("strict without bwrap: %v", strictErr)
	}
}

// noUsernsEnv marks a test binary re-run by runWithoutUserNamespaces.
const noUsernsEnv = "HARNESS_TEST_NO_USERNS"

// runWithoutUserNamespaces runs this test binary's test name again on a
// machine without user namespaces, as far as the sandbox can tell
// (testenv.WithoutUserns).
func runWithoutUserNamespaces(t *testing.T, name string) {
	t.Helper()
	if err := testenv.WithoutUsernsUnavailable(); err != nil {
		testenv.Missing(t, testenv.Userns, err.Error())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := testenv.WithoutUserns(exe, "-test.run", "^"+name+"$", "-test.v")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), noUsernsEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("without user namespaces:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Errorf("without user namespaces: %v\n%s", err, out)
	}
}

// pathWithout is a PATH for a machine that has every program this one
// has, except the named ones: a directory (outside /tmp, which the sandbox
// replaces) of links to the rest, so the sandbox's commands still find
// their tools.
func pathWithout(t *testing.T, names ...string) string {
	t.Helper()
	dir := cacheDir(t)
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if slices.Contains(names, e.Name()) {
				continue
			}
			// The first directory on PATH wins, as for a lookup.
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	for _, n := range names {
		if p, err := exec.LookPath(filepath.Join(dir, n)); err == nil {
			t.Fatalf("%s is still reachable: %s", n, p)
		}
	}
	return dir
}

func TestWallsOf(t *testing.T) {
	if w := wallsOf(sandbox.BackendBwrap, sandbox.BackendBwrap); w.Weaker || w.CannotHold != nil {
		t.Errorf("bwrap against bwrap: %+v", w)
	}
	if w := wallsOf(sandbox.BackendNone, sandbox.BackendBwrap); !w.Weaker || len(w.CannotHold) == 0 {
		t.Errorf("none against bwrap: %+v", w)
	}
}
