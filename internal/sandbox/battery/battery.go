package battery

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/shellquote"
)

// The escape battery's runner, shared by every system: a platform file
// (fixture_linux.go, fixture_darwin.go) builds the throw-away world and
// lists the probes; this file opens the sandbox, runs each probe and says
// held, ESCAPED or skip, one line a probe.

// Run runs the escape battery live against backend: it builds a
// throw-away project (a path with spaces and quotes), a fake home with
// canary secrets, host listeners and a host terminal, then attempts each
// escape from inside the sandbox (or, for host probes, through harness's
// own host-side code with a command as the accomplice) and checks the host
// side. It writes one line per probe to w and returns how many escaped
// (or, for the probes marked "must work", failed). It never touches the
// real home directory.
func Run(ctx context.Context, backend string, w io.Writer, opts ...sandbox.Option) (escaped int, err error) {
	f, err := newBatteryFixture()
	if err != nil {
		return 0, err
	}
	defer f.close()
	pol, err := walls.NewPolicy(f.policyOptions())
	if err != nil {
		return 0, err
	}
	sb, err := sandbox.Open(ctx, walls.NewLive(pol), backend, opts...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	helper := sandbox.Inspect(sb).Helper
	fmt.Fprintf(w, "escape battery: backend %s%s, project %q\n", sb.Backend(), batteryMode(sb), f.project())
	for _, l := range batteryHeader(sb) {
		fmt.Fprintln(w, l)
	}
	return runProbes(ctx, sb, w, f.probes(sb, helper))
}

// batteryFixture is one platform's throw-away world.
type batteryFixture interface {
	policyOptions() walls.PolicyOptions
	project() string
	// probes lists the attempts in order; helper is the harness binary as
	// seen inside ("" when unknown: the probes that need it are skipped).
	probes(sb sandbox.Sandbox, helper string) []probe
	close()
}

// probe is one attempted escape, or one thing that must work inside.
type probe struct {
	name    string
	script  string // run inside the walls, then check decides
	timeout time.Duration
	before  func()
	check   func(*sandbox.Result) string // "" when the walls held (or the grant worked)
	// host, when set, replaces script and check: an attack whose harm
	// would land through harness's own host-side code (the file tools, the
	// kill scan, the protection scan), with commands inside as the
	// accomplice. It returns what escaped ("" for none) and a note.
	host func(ctx context.Context) (problem, note string)
	skip string
}

// runProbes runs ps against sb, one line each, and counts the escapes.
func runProbes(ctx context.Context, sb sandbox.Sandbox, w io.Writer, ps []probe) (escaped int, err error) {
	for _, pr := range ps {
		if pr.skip != "" {
			fmt.Fprintf(w, "skip     %-40s %s\n", pr.name, pr.skip)
			continue
		}
		if pr.before != nil {
			pr.before()
		}
		var problem, note string
		if pr.host != nil {
			problem, note = pr.host(ctx)
		} else {
			r, err := sb.Run(ctx, sandbox.Cmd{Script: pr.script, Timeout: pr.timeout})
			if err != nil {
				return escaped, fmt.Errorf("probe %s: %w", pr.name, err)
			}
			if problem = pr.check(r); problem != "" && len(r.Tampered) > 0 {
				note = fmt.Sprintf("detected after the fact: %d protected paths changed", len(r.Tampered))
			}
		}
		if note != "" {
			note = " (" + note + ")"
		}
		if problem == "" {
			fmt.Fprintf(w, "held     %s%s\n", pr.name, note)
			continue
		}
		escaped++
		fmt.Fprintf(w, "ESCAPED  %-40s %s%s\n", pr.name, problem, note)
	}
	return escaped, nil
}

// otherSecrets are canaries beneath the fixture's home for the secrets of
// other tools (class 7 of the threats): other agents' credentials, git's
// XDG store, the Hugging Face token, a shell history, the session store.
var otherSecrets = []string{
	".claude/.credentials.json", ".codex/auth.json", ".config/github-copilot/hosts.json",
	".cache/huggingface/token", ".config/git/credentials", ".bash_history",
	".agents/sessions/other-project/1.jsonl",
}

// baseFixture is what every platform's world has: the directories, the
// canary secrets, a host unix and TCP listener.
type baseFixture struct {
	base, proj, sibling, home, outside string
	tag                                string // random, names canaries and markers
	key, sshKey, agentsEnv             string // canary secrets
	unixLn, tcpLn                      net.Listener
}

// newBaseFixture creates the world under a fresh directory outside /tmp
// (canonical: /var is /private/var on macOS) with the common files and
// extra (path -> content, paths made by the caller from the returned
// fixture's fields, so it is a function of it).
func newBaseFixture(extra func(*baseFixture) map[string]string) (*baseFixture, error) {
	var rb [6]byte
	rand.Read(rb[:])
	tag := hex.EncodeToString(rb[:])
	base, err := os.MkdirTemp(backend.OutsideBase(), "harness-battery-")
	if err != nil {
		return nil, fmt.Errorf("escape battery: %w", err)
	}
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	f := &baseFixture{
		base: base, tag: tag,
		proj:      filepath.Join(base, `my "proj" it's here`),
		sibling:   filepath.Join(base, "sibling"),
		home:      filepath.Join(base, "home"),
		outside:   filepath.Join(base, "outside.txt"),
		key:       "sk-canary-" + tag,
		sshKey:    "ssh-canary-" + tag,
		agentsEnv: "env-canary-" + tag,
	}
	files := map[string]string{
		filepath.Join(f.home, ".ssh", "id_rsa"):  f.sshKey,
		filepath.Join(f.home, ".agents", "env"):  "ANTHROPIC_API_KEY=" + f.agentsEnv,
		f.outside:                                "original",
		filepath.Join(f.sibling, "keep"):         "original",
		filepath.Join(f.proj, "README"):          "project",
		filepath.Join(f.proj, ".agents", "conf"): "original",
	}
	for _, rel := range otherSecrets {
		files[filepath.Join(f.home, rel)] = "secret-canary-" + tag
	}
	if extra != nil {
		for p, c := range extra(f) {
			files[p] = c
		}
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.close()
			return nil, err
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			f.close()
			return nil, err
		}
	}
	if err := os.Symlink(f.outside, filepath.Join(f.proj, "link-out")); err != nil {
		f.close()
		return nil, err
	}
	f.unixLn, _ = net.Listen("unix", filepath.Join(f.base, "host.sock"))
	f.tcpLn, _ = net.Listen("tcp", "127.0.0.1:0")
	return f, nil
}

func (f *baseFixture) project() string { return f.proj }

// environ is the host environment with canary API keys: none may pass.
func (f *baseFixture) environ() []string {
	return append(os.Environ(),
		"ANTHROPIC_API_KEY="+f.key, "OPENAI_API_KEY="+f.key, "LC_HARNESS_TOKEN="+f.key, "HARNESS_CANARY="+f.key)
}

func (f *baseFixture) close() {
	for _, l := range []net.Listener{f.unixLn, f.tcpLn} {
		if l != nil {
			l.Close()
		}
	}
	os.RemoveAll(f.base)
}

// commonProbes are the attempts every backend must hold alike: writes
// outside the project, links out of it, secrets, the environment, host
// sockets. etc is a file to try in the system's /etc (canonical); h runs
// the harness helper's probes ("" when there is none).
func (f *baseFixture) commonProbes(etc, h string) []probe {
	q := shellquote.Quote
	outsideSame := checkUnchanged(f.outside, "original")
	ps := []probe{
		{name: "write inside the project (must work)", script: "echo inside > inside.txt && echo inside > " + q(f.proj+"/inside 2.txt"),
			check: func(r *sandbox.Result) string {
				if content(filepath.Join(f.proj, "inside.txt")) != "inside\n" || content(filepath.Join(f.proj, "inside 2.txt")) != "inside\n" {
					return fmt.Sprintf("a write inside the project failed (exit %d): %s", r.ExitCode, backend.FirstLine(r.Output))
				}
				return ""
			}},
		{name: "write /etc", script: "echo x > " + q(etc), check: checkAbsent(etc)},
		{name: "write $HOME", script: "echo x > " + q(f.home+"/escaped"), check: checkAbsent(f.home + "/escaped")},
		{name: "write a sibling of the project", script: "echo x > " + q(f.sibling+"/escaped") + "; rm -f " + q(f.sibling+"/keep"),
			check: func(r *sandbox.Result) string {
				if !exists(f.sibling + "/keep") {
					os.WriteFile(f.sibling+"/keep", []byte("original"), 0o600)
					return "removed a file beside the project"
				}
				return checkAbsent(f.sibling + "/escaped")(r)
			}},
		{name: "symlink out of the project", script: "echo evil > link-out; ln -s " + q(f.outside) + " l2; echo evil > l2", check: outsideSame},
		{name: "hard link out of the project", script: "ln " + q(f.outside) + " hard; echo evil >> hard", check: outsideSame},
		{name: "secrets unreadable (~/.ssh, ~/.agents/env, other tools')", script: "cat " + q(f.home+"/.ssh/id_rsa") + " " + q(f.home+"/.agents/env") + "; grep -r canary " + q(f.home),
			check: checkLacks(f.sshKey, f.agentsEnv, "secret-canary-"+f.tag)},
		{name: "/dev/tcp to a host loopback listener", script: "if command -v bash >/dev/null; then bash -c 'echo x > /dev/tcp/127.0.0.1/" + port(f.tcpLn) + "'; fi",
			check: checkNoConn(f.tcpLn)},
	}
	if h == "" {
		return ps
	}
	unix := probe{name: "host unix socket (pathname)", script: h + "connect-unix " + q(filepath.Join(f.base, "host.sock")), check: helperRan(checkNoConn(f.unixLn))}
	if f.unixLn == nil {
		unix.skip = "could not listen on the host"
	}
	return append(ps, unix,
		probe{name: "TCP to a host loopback listener", script: h + "connect-tcp " + q(f.tcpLn.Addr().String()), check: helperRan(checkNoConn(f.tcpLn))})
}

// helperCommand is the shell prefix that runs one of the harness helper's
// probes inside ("" without a helper).
func helperCommand(helper string) string {
	if helper == "" {
		return ""
	}
	return shellquote.Quote(helper) + " " + inner.ProbeArg + " "
}

// accepted reports whether a connection reached the host listener.
func accepted(l net.Listener) bool {
	if l == nil {
		return false
	}
	type deadliner interface{ SetDeadline(time.Time) error }
	if d, ok := l.(deadliner); ok {
		d.SetDeadline(time.Now().Add(200 * time.Millisecond))
	}
	c, err := l.Accept()
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func port(l net.Listener) string {
	if l == nil {
		return "0"
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func content(p string) string { b, _ := os.ReadFile(p); return string(b) }

// checkAbsent fails when a command created any of paths on the host (and
// removes it, so the next probe starts clean).
func checkAbsent(paths ...string) func(*sandbox.Result) string {
	return func(*sandbox.Result) string {
		for _, p := range paths {
			if exists(p) {
				os.RemoveAll(p)
				return "created " + p + " on the host"
			}
		}
		return ""
	}
}

// checkUnchanged fails when path no longer holds want (and restores it).
func checkUnchanged(path, want string) func(*sandbox.Result) string {
	return func(*sandbox.Result) string {
		if c := content(path); c != want {
			os.WriteFile(path, []byte(want), 0o600)
			return fmt.Sprintf("%s now holds %q", path, c)
		}
		return ""
	}
}

// checkLacks fails when the output holds a canary.
func checkLacks(canaries ...string) func(*sandbox.Result) string {
	return func(r *sandbox.Result) string {
		for _, c := range canaries {
			if bytes.Contains(r.Output, []byte(c)) {
				return "the output holds a canary secret"
			}
		}
		return ""
	}
}

// checkHolds is for what must work inside: every mark must be printed.
func checkHolds(what string, marks ...string) func(*sandbox.Result) string {
	return func(r *sandbox.Result) string {
		for _, m := range marks {
			if !bytes.Contains(r.Output, []byte(m)) {
				return fmt.Sprintf("%s does not work inside (exit %d): %s", what, r.ExitCode, backend.FirstLine(r.Output))
			}
		}
		return ""
	}
}

// checkAll is every check in turn; the first problem wins.
func checkAll(checks ...func(*sandbox.Result) string) func(*sandbox.Result) string {
	return func(r *sandbox.Result) string {
		for _, c := range checks {
			if p := c(r); p != "" {
				return p
			}
		}
		return ""
	}
}

// checkNoConn fails when the host listener l accepted a connection.
func checkNoConn(l net.Listener) func(*sandbox.Result) string {
	return func(*sandbox.Result) string {
		if accepted(l) {
			return "a host listener accepted a connection"
		}
		return ""
	}
}

// helperRan makes a helper probe fail when the helper never ran: a probe
// that cannot start must not count as a wall that held.
func helperRan(check func(*sandbox.Result) string) func(*sandbox.Result) string {
	return func(r *sandbox.Result) string {
		if !bytes.Contains(r.Output, []byte("denied:")) && !bytes.Contains(r.Output, []byte("ESCAPED")) && !bytes.Contains(r.Output, []byte("works")) {
			return "the probe did not run: " + backend.FirstLine(r.Output)
		}
		return check(r)
	}
}

// noEscape fails when a helper probe printed ESCAPED.
func noEscape(r *sandbox.Result) string {
	if i := bytes.Index(r.Output, []byte("ESCAPED")); i >= 0 {
		return backend.FirstLine(r.Output[i:])
	}
	return ""
}
