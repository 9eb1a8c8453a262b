package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Battery runs the escape battery live against backend: it builds a
// throw-away project (with a path full of spaces and quotes), a fake home
// with canary secrets, host listeners and a host terminal, then attempts
// each escape from inside the sandbox and checks the host side. It writes
// one line per probe to w and returns how many escaped. It never touches
// the real home directory.
func Battery(ctx context.Context, backend string, w io.Writer, opts ...Option) (escaped int, err error) {
	f, err := newFixture()
	if err != nil {
		return 0, err
	}
	defer f.close()
	pol, err := NewPolicy(PolicyOptions{Project: f.proj, Home: f.home, Environ: f.environ(), Timeout: 30 * time.Second,
		Hide: []string{filepath.Join(f.home, ".cache", "harness", "spill")}})
	if err != nil {
		return 0, err
	}
	sb, err := Open(ctx, pol, backend, opts...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	helper, mode := "", ""
	var l *launcher
	if s, ok := sb.(*instance); ok {
		helper, mode = s.helper, " (a sandbox per command)"
		if l, _ = s.launch.(*launcher); l != nil {
			mode = " (one launcher per session)"
		}
	}
	if IsContainer(sb.Backend()) {
		mode = " (one container per session, an exec per command)"
	}
	fmt.Fprintf(w, "escape battery: backend %s%s, project %q\n", sb.Backend(), mode, f.proj)
	fmt.Fprintf(w, "resource bounds: %s\n", pol.LimitsText())
	if s, ok := sb.(*instance); ok && s.cg != nil {
		fmt.Fprintf(w, "  and %s\n", s.cg.text())
	} else {
		fmt.Fprintf(w, "  and no writable cgroup v2 here: no pids.max or memory.max; the kill scan ends each command's processes\n")
	}
	fmt.Fprintf(w, "chmod, chown, utime, xattr outside the project: %s\n", MetadataWall(sb.Backend()))
	for _, pr := range append(f.probes(helper), f.launcherProbes(helper, l)...) {
		if pr.skip != "" {
			fmt.Fprintf(w, "skip     %-34s %s\n", pr.name, pr.skip)
			continue
		}
		if pr.before != nil {
			pr.before()
		}
		r, err := sb.Run(ctx, Cmd{Script: pr.script, Timeout: pr.timeout})
		if err != nil {
			return escaped, fmt.Errorf("probe %s: %w", pr.name, err)
		}
		problem := pr.check(r)
		if problem == "" {
			fmt.Fprintf(w, "held     %s\n", pr.name)
			continue
		}
		escaped++
		note := ""
		if len(r.Tampered) > 0 {
			note = fmt.Sprintf(" (detected after the fact: %d protected paths changed)", len(r.Tampered))
		}
		fmt.Fprintf(w, "ESCAPED  %-34s %s%s\n", pr.name, problem, note)
	}
	for _, hp := range f.hostProbes(sb, helper) {
		if hp.skip != "" {
			fmt.Fprintf(w, "skip     %-34s %s\n", hp.name, hp.skip)
			continue
		}
		problem, note := hp.run(ctx)
		if problem == "" {
			if note != "" {
				note = " (" + note + ")"
			}
			fmt.Fprintf(w, "held     %s%s\n", hp.name, note)
			continue
		}
		escaped++
		fmt.Fprintf(w, "ESCAPED  %-34s %s\n", hp.name, problem)
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

type probe struct {
	name    string
	script  string
	timeout time.Duration
	before  func()
	check   func(*Result) string // "" when the walls held
	skip    string
}

type fixture struct {
	base, proj, sibling, home, outside string
	tag                                string // random, names canaries and markers
	key, sshKey, agentsEnv             string // canary secrets
	unixLn, abstractLn, tcpLn          net.Listener
	ptyMaster, ptySlave                *os.File
	ptsName                            string
}

const (
	hookText   = "#!/bin/sh\necho original hook\n"
	configText = "[core]\n\trepositoryformatversion = 0\n"
)

func newFixture() (*fixture, error) {
	var rb [6]byte
	rand.Read(rb[:])
	tag := hex.EncodeToString(rb[:])
	base, err := os.MkdirTemp(outsideBase(), "harness-battery-")
	if err != nil {
		return nil, fmt.Errorf("escape battery: %w", err)
	}
	f := &fixture{
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
		filepath.Join(f.home, ".ssh", "id_rsa"):                               f.sshKey,
		filepath.Join(f.home, ".agents", "env"):                               "ANTHROPIC_API_KEY=" + f.agentsEnv,
		filepath.Join(f.home, ".cache", "harness", "spill", "other", "1.txt"): "spill-canary-" + tag,
		f.outside:                                "original",
		filepath.Join(f.sibling, "keep"):         "original",
		filepath.Join(f.proj, "README"):          "project",
		filepath.Join(f.proj, ".agents", "conf"): "original",
	}
	for _, rel := range otherSecrets {
		files[filepath.Join(f.home, rel)] = "secret-canary-" + tag
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
	f.resetGit()
	if err := os.Symlink(f.outside, filepath.Join(f.proj, "link-out")); err != nil {
		f.close()
		return nil, err
	}
	f.listen()
	f.openPty()
	return f, nil
}

// resetGit (re)creates the project's repository and a nested one, so a
// probe that broke them does not hide what the next probe would do.
func (f *fixture) resetGit() {
	for _, repo := range []string{f.proj, filepath.Join(f.proj, "sub")} {
		g := filepath.Join(repo, ".git")
		if _, err := os.Stat(filepath.Join(g, "HEAD")); err == nil {
			os.WriteFile(filepath.Join(g, "hooks", "pre-commit"), []byte(hookText), 0o755)
			os.WriteFile(filepath.Join(g, "config"), []byte(configText), 0o644)
			continue
		}
		os.RemoveAll(g)
		os.MkdirAll(filepath.Join(g, "hooks"), 0o755)
		os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(g, "config"), []byte(configText), 0o644)
		os.WriteFile(filepath.Join(g, "hooks", "pre-commit"), []byte(hookText), 0o755)
	}
	os.RemoveAll(filepath.Join(f.proj, "git-moved"))
}

func (f *fixture) listen() {
	f.unixLn, _ = net.Listen("unix", filepath.Join(f.base, "host.sock"))
	f.abstractLn, _ = net.Listen("unix", "@harness-battery-"+f.tag)
	f.tcpLn, _ = net.Listen("tcp", "127.0.0.1:0")
}

// openPty opens a host terminal in raw mode: a byte pushed with TIOCSTI
// shows up in its input queue.
func (f *fixture) openPty() {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return
	}
	fd := int(m.Fd())
	if unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0) != nil {
		m.Close()
		return
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	s, err := os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return
	}
	if t, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err == nil {
		t.Lflag &^= unix.ICANON | unix.ECHO
		unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, t)
	}
	os.Chmod(name, 0o666) // an unprivileged sandbox must not be stopped by mode bits alone
	f.ptyMaster, f.ptySlave, f.ptsName = m, s, name
}

func (f *fixture) environ() []string {
	return append(os.Environ(),
		"ANTHROPIC_API_KEY="+f.key, "OPENAI_API_KEY="+f.key, "LC_HARNESS_TOKEN="+f.key, "HARNESS_CANARY="+f.key)
}

func (f *fixture) close() {
	for _, l := range []net.Listener{f.unixLn, f.abstractLn, f.tcpLn} {
		if l != nil {
			l.Close()
		}
	}
	if f.ptyMaster != nil {
		f.ptyMaster.Close()
		f.ptySlave.Close()
	}
	os.RemoveAll(f.base)
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

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func content(p string) string { b, _ := os.ReadFile(p); return string(b) }

func (f *fixture) probes(helper string) []probe {
	q := shellQuote
	outsideSame := func(r *Result) string {
		if c := content(f.outside); c != "original" {
			return fmt.Sprintf("%s now holds %q", f.outside, c)
		}
		return ""
	}
	absent := func(paths ...string) func(*Result) string {
		return func(*Result) string {
			for _, p := range paths {
				if exists(p) {
					os.RemoveAll(p)
					return "created " + p + " on the host"
				}
			}
			return ""
		}
	}
	gitIntact := func(*Result) string {
		for _, repo := range []string{f.proj, filepath.Join(f.proj, "sub")} {
			if c := content(filepath.Join(repo, ".git", "hooks", "pre-commit")); c != hookText {
				return "hook changed in " + repo
			}
			if c := content(filepath.Join(repo, ".git", "config")); c != configText {
				return "git config changed in " + repo
			}
		}
		if exists(filepath.Join(f.proj, "git-moved")) {
			return ".git was moved"
		}
		if c := content(filepath.Join(f.proj, ".agents", "conf")); c != "original" {
			return ".agents/conf changed"
		}
		return ""
	}
	outputLacks := func(canaries ...string) func(*Result) string {
		return func(r *Result) string {
			for _, c := range canaries {
				if bytes.Contains(r.Output, []byte(c)) {
					return "the output holds a canary secret"
				}
			}
			return ""
		}
	}
	noConn := func(l net.Listener) func(*Result) string {
		return func(*Result) string {
			if accepted(l) {
				return "a host listener accepted a connection"
			}
			return ""
		}
	}
	etc := "/etc/harness-battery-" + f.tag
	hostPID := fmt.Sprint(os.Getpid())
	marker := "harness-battery-marker-" + f.tag
	sleeper := fmt.Sprintf("sh -c 'sleep 300; : %s'", marker)

	ps := []probe{
		{name: "write inside the project", script: "echo inside > inside.txt && echo inside > " + q(f.proj+"/inside 2.txt"),
			check: func(r *Result) string {
				if content(filepath.Join(f.proj, "inside.txt")) != "inside\n" || content(filepath.Join(f.proj, "inside 2.txt")) != "inside\n" {
					return fmt.Sprintf("a write inside the project failed (exit %d): %s", r.ExitCode, firstLine(r.Output))
				}
				return ""
			}},
		{name: "write /etc", script: "echo x > " + q(etc), check: absent(etc)},
		{name: "write $HOME", script: "echo x > " + q(f.home+"/escaped"), check: absent(f.home + "/escaped")},
		{name: "write a sibling of the project", script: "echo x > " + q(f.sibling+"/escaped") + "; rm -f " + q(f.sibling+"/keep"),
			check: func(r *Result) string {
				if !exists(f.sibling + "/keep") {
					os.WriteFile(f.sibling+"/keep", []byte("original"), 0o600)
					return "removed a file beside the project"
				}
				return absent(f.sibling + "/escaped")(r)
			}},
		{name: "remount / read-write", script: "mount -o remount,rw / ; mount -t tmpfs none /etc ; echo x > " + q(etc), check: absent(etc)},
		{name: "capabilities (CapEff 0, NoNewPrivs 1)", script: "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status",
			check: func(r *Result) string {
				o := string(r.Output)
				if !strings.Contains(o, "CapEff:\t0000000000000000") || !strings.Contains(o, "CapPrm:\t0000000000000000") || !strings.Contains(o, "NoNewPrivs:\t1") {
					return "capabilities or no_new_privs: " + strings.ReplaceAll(strings.TrimSpace(o), "\n", "; ")
				}
				return ""
			}},
		{name: ".git hook and config writes", before: f.resetGit,
			script: "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo evil > sub/.git/hooks/pre-commit; echo evil > .agents/conf; chmod 777 .git/hooks/pre-commit",
			check:  gitIntact},
		{name: "mv .git", before: f.resetGit, script: "mv .git git-moved", check: gitIntact},
		{name: "rm -rf .git", before: f.resetGit, script: "rm -rf .git sub/.git .agents", check: func(r *Result) string {
			if !exists(filepath.Join(f.proj, ".git", "HEAD")) || !exists(filepath.Join(f.proj, "sub", ".git", "HEAD")) {
				return ".git was removed"
			}
			return gitIntact(r)
		}},
		{name: "symlink out of the project", script: "echo evil > link-out; ln -s " + q(f.outside) + " l2; echo evil > l2", check: outsideSame},
		{name: "hard link out of the project", script: "ln " + q(f.outside) + " hard; echo evil >> hard", check: outsideSame},
		{name: "/proc/<host pid>/root", script: "echo x > /proc/" + hostPID + "/root" + q(f.sibling+"/proc-escape") + "; cat /proc/" + hostPID + "/root" + q(f.home+"/.ssh/id_rsa"),
			check: func(r *Result) string {
				if p := absent(f.sibling + "/proc-escape")(r); p != "" {
					return p
				}
				return outputLacks(f.sshKey)(r)
			}},
		{name: "environment holds no API key", script: "env; cat /proc/self/environ", check: outputLacks(f.key)},
		{name: "secrets unreadable (~/.ssh, ~/.agents/env, other tools')", script: "cat " + q(f.home+"/.ssh/id_rsa") + " " + q(f.home+"/.agents/env") + "; grep -r canary " + q(f.home),
			check: outputLacks(f.sshKey, f.agentsEnv, "secret-canary-"+f.tag)},
		{name: "/tmp writable and private", script: "echo private-" + f.tag + " > \"${TMPDIR:-/tmp}/battery-" + f.tag + "\" && cat \"${TMPDIR:-/tmp}/battery-" + f.tag + "\"",
			check: func(r *Result) string {
				if !bytes.Contains(r.Output, []byte("private-"+f.tag)) {
					return "the temporary directory is not writable: " + firstLine(r.Output)
				}
				return absent("/tmp/battery-" + f.tag)(r)
			}},
		{name: "/tmp survives between commands", script: "cat \"${TMPDIR:-/tmp}/battery-" + f.tag + "\"",
			check: func(r *Result) string {
				if !bytes.Contains(r.Output, []byte("private-"+f.tag)) {
					return "the session's temporary directory lost a file between commands"
				}
				return ""
			}},
		{name: "unshare -Ur (nested user namespace)", script: "unshare -Ur true && echo NESTED-OK",
			check: func(r *Result) string {
				if bytes.Contains(r.Output, []byte("NESTED-OK")) {
					return "created a user namespace inside the sandbox"
				}
				return ""
			}},
		{name: "/dev/tcp to a host loopback listener", script: tcpScript(f.tcpLn), check: noConn(f.tcpLn)},
		{name: "timeout kills setsid/nohup/double-fork children", timeout: time.Second,
			script: sleeper + " & setsid " + sleeper + " & nohup " + sleeper + " >/dev/null 2>&1 & sh -c \"" + strings.ReplaceAll(sleeper, "'", "\\'") + " &\" ; (setsid sh -c 'sleep 300; : " + marker + "' &) ; sleep 300",
			check: func(r *Result) string {
				if !r.TimedOut || r.ExitCode != TimeoutExit {
					return fmt.Sprintf("the command was not timed out (exit %d)", r.ExitCode)
				}
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes survived the timeout", n)
				}
				return ""
			}},
	}
	if helper == "" {
		return ps
	}
	h := q(helper) + " " + probeArg + " "
	// ran makes a probe fail when the helper never ran: a probe that
	// cannot start must not count as a wall that held.
	ran := func(check func(*Result) string) func(*Result) string {
		return func(r *Result) string {
			if !bytes.Contains(r.Output, []byte("denied:")) && !bytes.Contains(r.Output, []byte("ESCAPED")) {
				return "the probe did not run: " + firstLine(r.Output)
			}
			return check(r)
		}
	}
	sockProbe := func(name string, l net.Listener, addr string) probe {
		pr := probe{name: name, script: h + "connect-unix " + q(addr), check: ran(noConn(l))}
		if l == nil {
			pr.skip = "could not listen on the host"
		}
		return pr
	}
	ps = append(ps, probe{name: "chmod, utime, xattr outside the project", script: h + "meta " + q(f.outside), check: ran(f.metaSame)})
	ps = append(ps,
		sockProbe("host unix socket (pathname)", f.unixLn, filepath.Join(f.base, "host.sock")),
		sockProbe("host unix socket (abstract)", f.abstractLn, "@harness-battery-"+f.tag),
		probe{name: "TCP to a host loopback listener", script: h + "connect-tcp " + q(f.tcpLn.Addr().String()), check: ran(noConn(f.tcpLn))},
		probe{name: "TIOCSTI on a fresh pty", script: h + "tiocsti-pty", check: ran(func(r *Result) string {
			if bytes.Contains(r.Output, []byte("ESCAPED")) {
				return "TIOCSTI pushed input into a terminal"
			}
			return ""
		})},
	)
	pty := probe{name: "TIOCSTI into the host terminal", skip: "no host pty"}
	if f.ptySlave != nil {
		pty = probe{name: "TIOCSTI into the host terminal", script: h + "tiocsti " + q(f.ptsName), check: ran(func(*Result) string {
			if n, err := unix.IoctlGetInt(int(f.ptySlave.Fd()), unix.TIOCINQ); err == nil && n > 0 {
				return fmt.Sprintf("%d bytes were typed into the host terminal", n)
			}
			return ""
		})}
	}
	return append(ps, pty)
}

// launcherProbes attack the launcher's own surface: descriptors a command
// might inherit, and the launcher and supervisors that share its uid and
// PID namespace.
func (f *fixture) launcherProbes(helper string, l *launcher) []probe {
	if helper == "" {
		return nil
	}
	h := shellQuote(helper) + " " + probeArg + " "
	held := func(r *Result) string {
		if bytes.Contains(r.Output, []byte("ESCAPED")) {
			return firstLine(r.Output[bytes.Index(r.Output, []byte("ESCAPED")):])
		}
		return ""
	}
	ran := func(r *Result) string {
		if !bytes.Contains(r.Output, []byte("denied:")) && !bytes.Contains(r.Output, []byte("ESCAPED")) {
			return "the probe did not run: " + firstLine(r.Output)
		}
		return held(r)
	}
	ps := []probe{{name: "no inherited descriptors", script: h + "fds", check: ran}}
	if l == nil {
		return ps
	}
	alive := func() (string, int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.cur == nil {
			return "the launcher is gone", l.restarts
		}
		select {
		case <-l.cur.done:
			return "the launcher died", l.restarts
		default:
			return "", l.restarts
		}
	}
	_, restarts := alive()
	reached := func(r *Result) string {
		if p := held(r); p != "" {
			return p
		}
		var n int
		if i := bytes.Index(r.Output, []byte("checked ")); i < 0 {
			return "the probe did not run: " + firstLine(r.Output)
		} else if fmt.Sscan(string(r.Output[i+len("checked "):]), &n); n < 2 {
			return fmt.Sprintf("found %d launcher processes, want the launcher and a supervisor at least", n)
		}
		time.Sleep(100 * time.Millisecond) // a killed launcher needs a moment to be seen dead
		if p, n := alive(); p != "" || n != restarts {
			return fmt.Sprintf("the launcher was restarted (%s)", p)
		}
		return ""
	}
	ps = append(ps, probe{name: "ptrace, mem, fd, environ of the launcher", script: h + "supervisors", check: reached})
	kill := probe{name: "kill the launcher and supervisors", script: h + "supervisors kill", check: reached}
	if LandlockABI() < 6 {
		kill.skip = "Landlock below ABI 6 cannot stop a same-uid signal (a denial of service: the next command restarts the launcher)"
	}
	return append(ps, kill)
}

func tcpScript(l net.Listener) string {
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if _, err := exec.LookPath("bash"); err != nil {
		return "echo no bash"
	}
	return "bash -c 'echo x > /dev/tcp/127.0.0.1/" + port + "'"
}

// survivors counts host processes whose command line holds marker, waiting
// up to grace for the kernel to finish killing a namespace.
func survivors(marker string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if strings.Trim(e.Name(), "0123456789") != "" {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.Contains(b, []byte(probeArg)) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metaSame checks, on the host, that the file outside the project kept its
// mode, modification time and extended attributes (probeMeta's targets).
func (f *fixture) metaSame(*Result) string {
	var st unix.Stat_t
	if err := unix.Stat(f.outside, &st); err != nil {
		return "cannot stat " + f.outside + ": " + err.Error()
	}
	var bad []string
	if st.Mode&0o7777 != 0o600 {
		bad = append(bad, fmt.Sprintf("mode %o", st.Mode&0o7777))
	}
	if st.Mtim.Sec == 1 {
		bad = append(bad, "mtime set to 1970")
	}
	if n, err := unix.Getxattr(f.outside, "user.harness", nil); err == nil && n >= 0 {
		bad = append(bad, "xattr user.harness set")
	}
	if bad != nil {
		// Put it back, so later probes start from the same file.
		os.Chmod(f.outside, 0o600)
		unix.Removexattr(f.outside, "user.harness")
		now := time.Now()
		os.Chtimes(f.outside, now, now)
		return f.outside + ": " + strings.Join(bad, ", ")
	}
	return ""
}
