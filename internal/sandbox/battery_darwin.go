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
	"syscall"
	"time"
)

// Battery runs the escape battery live against the seatbelt backend: it
// builds a throw-away project (a path with spaces and quotes), a fake home
// with canary secrets (also in a keychain and behind a link in ~/.ssh),
// host listeners, a host terminal and a host process holding a canary in
// its environment, then attempts each escape from inside the sandbox and
// checks the host side. Several probes settle what only a Mac can: case
// folding, firmlinks, hard links and clones, the name patterns compiling,
// fresh binaries running. One line a probe; it returns how many escaped
// (or, for the probes marked "must work", failed). It never touches the
// real home directory.
func Battery(ctx context.Context, backend string, w io.Writer, opts ...Option) (escaped int, err error) {
	f, err := newDarwinFixture()
	if err != nil {
		return 0, err
	}
	defer f.close()
	pol, err := NewPolicy(PolicyOptions{Project: f.proj, Home: f.home, Environ: f.environ(), Timeout: 30 * time.Second})
	if err != nil {
		return 0, err
	}
	sb, err := Open(ctx, pol, backend, opts...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	helper := ""
	if s, ok := sb.(*instance); ok {
		helper = s.helper
	}
	fmt.Fprintf(w, "escape battery: backend %s, project %q\n", sb.Backend(), f.proj)
	for _, pr := range f.probes(helper) {
		if pr.skip != "" {
			fmt.Fprintf(w, "skip     %-40s %s\n", pr.name, pr.skip)
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
		fmt.Fprintf(w, "ESCAPED  %-40s %s%s\n", pr.name, problem, note)
	}
	return escaped, nil
}

type probe struct {
	name    string
	script  string
	timeout time.Duration
	before  func()
	check   func(*Result) string // "" when the walls held (or the grant worked)
	skip    string
}

type darwinFixture struct {
	base, proj, sibling, home, outside, dotfiles  string
	tag, key, sshKey, agentsEnv, keychain, linked string
	unixLn, tcpLn                                 net.Listener
	ptyMaster, ptySlave                           *os.File
	hostProc                                      *exec.Cmd
}

const (
	hookText   = "#!/bin/sh\necho original hook\n"
	configText = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .githooks\n"
)

func newDarwinFixture() (*darwinFixture, error) {
	var rb [6]byte
	rand.Read(rb[:])
	tag := hex.EncodeToString(rb[:])
	base, err := os.MkdirTemp(outsideBase(), "harness-battery-")
	if err != nil {
		return nil, fmt.Errorf("escape battery: %w", err)
	}
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r // /var is /private/var: the policy speaks canonical paths
	}
	f := &darwinFixture{
		base: base, tag: tag,
		proj:      filepath.Join(base, `my "proj" it's here`),
		sibling:   filepath.Join(base, "sibling"),
		home:      filepath.Join(base, "home"),
		outside:   filepath.Join(base, "outside.txt"),
		dotfiles:  filepath.Join(base, "dotfiles"),
		key:       "sk-canary-" + tag,
		sshKey:    "ssh-canary-" + tag,
		agentsEnv: "env-canary-" + tag,
		keychain:  "keychain-canary-" + tag,
		linked:    "linked-canary-" + tag,
	}
	files := map[string]string{
		filepath.Join(f.home, ".ssh", "id_rsa"):                         f.sshKey,
		filepath.Join(f.home, ".agents", "env"):                         "ANTHROPIC_API_KEY=" + f.agentsEnv,
		filepath.Join(f.home, "Library", "Keychains", "login.keychain"): f.keychain,
		filepath.Join(f.dotfiles, "id_ed25519"):                         f.linked,
		f.outside:                                                       "original",
		filepath.Join(f.sibling, "keep"):                                "original",
		filepath.Join(f.proj, "README"):                                 "project",
		filepath.Join(f.proj, ".agents", "conf"):                        "original",
		filepath.Join(f.proj, "wt", ".git"):                             "gitdir: " + filepath.Join(base, "wt-gitdir") + "\n",
		filepath.Join(base, "wt-gitdir", "HEAD"):                        "ref: refs/heads/wt\n",
		filepath.Join(base, "wt-gitdir", "config"):                      "[core]\n",
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
	for link, target := range map[string]string{
		filepath.Join(f.proj, "link-out"):           f.outside,
		filepath.Join(f.home, ".ssh", "id_ed25519"): filepath.Join(f.dotfiles, "id_ed25519"),
	} {
		if err := os.Symlink(target, link); err != nil {
			f.close()
			return nil, err
		}
	}
	f.unixLn, _ = net.Listen("unix", filepath.Join(f.base, "host.sock"))
	f.tcpLn, _ = net.Listen("tcp", "127.0.0.1:0")
	f.ptyMaster, f.ptySlave, _ = openPty()
	// A host process with a canary in its environment: its arguments and
	// environment (KERN_PROCARGS2, ps -E) must stay unreadable inside.
	f.hostProc = exec.Command("/bin/sleep", "300")
	f.hostProc.Env = []string{"HARNESS_BATTERY_CANARY=" + f.key}
	if f.hostProc.Start() != nil {
		f.hostProc = nil
	}
	return f, nil
}

// resetGit (re)creates the project's repository and a nested one.
func (f *darwinFixture) resetGit() {
	for _, repo := range []string{f.proj, filepath.Join(f.proj, "sub")} {
		g := filepath.Join(repo, ".git")
		os.MkdirAll(filepath.Join(g, "hooks"), 0o755)
		os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(g, "config"), []byte(configText), 0o644)
		os.WriteFile(filepath.Join(g, "hooks", "pre-commit"), []byte(hookText), 0o755)
	}
	os.WriteFile(filepath.Join(f.proj, "wt", ".git"), []byte("gitdir: "+filepath.Join(f.base, "wt-gitdir")+"\n"), 0o644)
	os.RemoveAll(filepath.Join(f.proj, "git-moved"))
}

func (f *darwinFixture) environ() []string {
	return append(os.Environ(), "ANTHROPIC_API_KEY="+f.key, "OPENAI_API_KEY="+f.key, "HARNESS_CANARY="+f.key)
}

func (f *darwinFixture) close() {
	for _, l := range []net.Listener{f.unixLn, f.tcpLn} {
		if l != nil {
			l.Close()
		}
	}
	if f.ptyMaster != nil {
		f.ptyMaster.Close()
		f.ptySlave.Close()
	}
	if f.hostProc != nil {
		f.hostProc.Process.Kill()
		f.hostProc.Wait()
	}
	os.RemoveAll(f.base)
}

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

// survivors counts host processes whose command line holds marker (ps runs
// on the host, outside the walls), waiting up to grace.
func survivors(marker string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		out, _ := exec.Command("/bin/ps", "-axww", "-o", "command=").Output()
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, marker) && !strings.Contains(l, probeArg) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *darwinFixture) probes(helper string) []probe {
	q := shellQuote
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
	outsideSame := func(*Result) string {
		if c := content(f.outside); c != "original" {
			os.WriteFile(f.outside, []byte("original"), 0o600)
			return fmt.Sprintf("%s now holds %q", f.outside, c)
		}
		return ""
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
		if !strings.HasPrefix(content(filepath.Join(f.proj, "wt", ".git")), "gitdir: "+f.base) {
			return "the worktree's pointer file changed"
		}
		if c := content(filepath.Join(f.base, "wt-gitdir", "HEAD")); c != "ref: refs/heads/wt\n" {
			return "the worktree's gitdir changed"
		}
		if exists(filepath.Join(f.proj, "git-moved")) {
			return ".git was moved"
		}
		if c := content(filepath.Join(f.proj, ".agents", "conf")); c != "original" {
			return ".agents/conf changed"
		}
		return ""
	}
	lacks := func(canaries ...string) func(*Result) string {
		return func(r *Result) string {
			for _, c := range canaries {
				if bytes.Contains(r.Output, []byte(c)) {
					return "the output holds a canary secret"
				}
			}
			return ""
		}
	}
	holds := func(what string, marks ...string) func(*Result) string {
		return func(r *Result) string {
			for _, m := range marks {
				if !bytes.Contains(r.Output, []byte(m)) {
					return fmt.Sprintf("%s does not work inside (exit %d): %s", what, r.ExitCode, firstLine(r.Output))
				}
			}
			return ""
		}
	}
	both := func(checks ...func(*Result) string) func(*Result) string {
		return func(r *Result) string {
			for _, c := range checks {
				if p := c(r); p != "" {
					return p
				}
			}
			return ""
		}
	}
	firm := func(p string) string { return firmlinkData + p }
	marker := "harness-battery-marker-" + f.tag
	sleeper := fmt.Sprintf("sh -c 'sleep 300; : %s'", marker)
	etc := "/private/etc/harness-battery-" + f.tag

	ps := []probe{
		{name: "write inside the project (must work)", script: "echo inside > inside.txt && echo inside > " + q(f.proj+"/inside 2.txt"),
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
		{name: "/tmp is not writable (only $TMPDIR)", script: "echo x > /tmp/harness-battery-" + f.tag, check: absent("/private/tmp/harness-battery-" + f.tag)},
		{name: "$TMPDIR writable and private (must work)", script: "echo private-" + f.tag + " > \"$TMPDIR/battery\" && cat \"$TMPDIR/battery\"",
			check: holds("$TMPDIR", "private-"+f.tag)},
		{name: "$TMPDIR survives between commands (must work)", script: "cat \"$TMPDIR/battery\"", check: holds("$TMPDIR", "private-"+f.tag)},
		{name: ".git hook and config writes", before: f.resetGit,
			script: "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo evil > sub/.git/hooks/pre-commit; echo evil > .agents/conf; chmod 777 .git/hooks/pre-commit",
			check:  gitIntact},
		{name: "case-folded carve-outs (.GIT, .Agents)", before: f.resetGit,
			script: "echo evil > .GIT/hooks/pre-commit; echo evil >> .Git/config; echo evil > SUB/.gIt/HOOKS/pre-commit; echo evil > .AGENTS/conf",
			check:  gitIntact},
		{name: "firmlink spelling (/System/Volumes/Data)", before: f.resetGit,
			script: "echo evil > " + q(firm(f.proj)+"/.git/hooks/pre-commit") + "; echo evil > " + q(firm(f.home)+"/escaped") + "; cat " + q(firm(f.home)+"/.ssh/id_rsa"),
			check:  both(gitIntact, absent(f.home+"/escaped"), lacks(f.sshKey))},
		{name: "mv .git, rm -rf .git", before: f.resetGit, script: "mv .git git-moved; rm -rf sub/.git .agents", check: func(r *Result) string {
			if !exists(filepath.Join(f.proj, ".git", "HEAD")) || !exists(filepath.Join(f.proj, "sub", ".git", "HEAD")) {
				return ".git was removed"
			}
			return gitIntact(r)
		}},
		{name: "new repository (.git, .GIT, git init) by name pattern",
			script: "mkdir -p new1/.git new2/.GIT; echo 'gitdir: /tmp' > new3.git; mkdir new4 && echo 'gitdir: ../x' > new4/.Git; if xcode-select -p >/dev/null 2>&1; then git init -q new5 2>/dev/null; fi",
			check:  absent(f.proj+"/new1/.git", f.proj+"/new2/.GIT", f.proj+"/new4/.Git", f.proj+"/new5/.git")},
		{name: "missing hooksPath target (.githooks, .GITHOOKS)",
			script: "mkdir -p .githooks; echo evil > .githooks/pre-commit; mkdir -p .GITHOOKS; echo evil > .GITHOOKS/pre-commit",
			check:  absent(f.proj+"/.githooks", f.proj+"/.GITHOOKS")},
		{name: "pointer file and its gitdir", before: f.resetGit,
			script: "echo 'gitdir: /tmp/evil' > wt/.git; echo evil > " + q(f.base+"/wt-gitdir/HEAD") + "; echo evil > WT/.GIT",
			check:  gitIntact},
		{name: "symlink out of the project", script: "echo evil > link-out; ln -s " + q(f.outside) + " l2; echo evil > l2", check: outsideSame},
		{name: "hard link out of the project", script: "ln " + q(f.outside) + " hard; echo evil >> hard", check: outsideSame},
		{name: "hard link to a protected file", before: f.resetGit, script: "ln .git/config cfg-link; echo evil >> cfg-link; ln .git/hooks/pre-commit hook-link; echo evil > hook-link",
			check: gitIntact},
		{name: "hard link and clone of a secret", script: "ln " + q(f.home+"/.ssh/id_rsa") + " k1; cat k1; cp -c " + q(f.home+"/.ssh/id_rsa") + " k2; cat k2",
			check: lacks(f.sshKey)},
		{name: "clone of a protected file", before: f.resetGit, script: "cp -c .git/config cfg-clone && echo evil >> cfg-clone; cp -c " + q(f.outside) + " out-clone && echo evil >> out-clone",
			check: both(gitIntact, outsideSame)},
		{name: "secrets unreadable (any case)", script: "cat " + q(f.home+"/.ssh/id_rsa") + " " + q(f.home+"/.SSH/id_rsa") + " " + q(f.home+"/.agents/env") + " " + q(f.home+"/.Agents/ENV") + "; grep -r canary " + q(f.home),
			check: lacks(f.sshKey, f.agentsEnv)},
		{name: "keychains unreadable", script: "cat " + q(f.home+"/Library/Keychains/login.keychain") + "; ls " + q(f.home+"/Library/Keychains"), check: lacks(f.keychain)},
		{name: "a link inside ~/.ssh to a key elsewhere", script: "cat " + q(f.home+"/.ssh/id_ed25519") + " " + q(f.dotfiles+"/id_ed25519"), check: lacks(f.linked)},
		{name: "environment holds no API key", script: "env", check: lacks(f.key)},
		{name: "executing a freshly built binary (must work)",
			script: "cp /bin/echo \"$TMPDIR/fresh\" && \"$TMPDIR/fresh\" fresh-tmp; cp /bin/echo ./fresh && ./fresh fresh-proj; " +
				"if xcode-select -p >/dev/null 2>&1; then printf 'int main(void){return 0;}' > \"$TMPDIR/t.c\" && cc -o \"$TMPDIR/t\" \"$TMPDIR/t.c\" && \"$TMPDIR/t\" && echo built-ok; else echo built-ok; fi",
			check: holds("running a binary made inside", "fresh-tmp", "fresh-proj", "built-ok")},
		{name: "named sysctls (must work)", script: "sysctl -n hw.ncpu hw.memsize kern.osrelease && uname -a && echo sysctl-ok", check: holds("sysctl", "sysctl-ok")},
		{name: "pasteboard and Apple Events", script: "pbpaste 2>/dev/null; echo; osascript -e 'tell application \"Finder\" to get name' >/dev/null 2>&1; echo \"as=$?\"",
			check: func(r *Result) string {
				if bytes.Contains(r.Output, []byte("as=0")) {
					return "an Apple Event reached Finder"
				}
				host, _ := exec.Command("/usr/bin/pbpaste").Output()
				if len(bytes.TrimSpace(host)) > 0 && bytes.Contains(r.Output, bytes.TrimSpace(host)) {
					return "read the user's pasteboard"
				}
				return ""
			}},
		{name: "/dev/tcp to a host loopback listener", script: "bash -c 'echo x > /dev/tcp/127.0.0.1/" + port(f.tcpLn) + "'", check: func(*Result) string {
			if accepted(f.tcpLn) {
				return "a host listener accepted a connection"
			}
			return ""
		}},
		{name: "timeout kills setsid/nohup/double-fork children", timeout: 2 * time.Second,
			script: sleeper + " & nohup " + sleeper + " >/dev/null 2>&1 & (" + sleeper + " &) ; perl -e 'use POSIX; fork and exit; POSIX::setsid(); exec \"sh\", \"-c\", \"sleep 300; : " + marker + "\"' ; sleep 300",
			check: func(r *Result) string {
				if !r.TimedOut {
					return fmt.Sprintf("the command was not timed out (exit %d)", r.ExitCode)
				}
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes survived the timeout", n)
				}
				return ""
			}},
		{name: "exit kills what the command left running",
			script: "(" + sleeper + " &) ; nohup " + sleeper + " >/dev/null 2>&1 & perl -e 'use POSIX; fork and exit; POSIX::setsid(); exec \"sh\", \"-c\", \"sleep 300; : " + marker + "-x\"' ; echo started",
			check: func(r *Result) string {
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes outlived their command", n)
				}
				return ""
			}},
	}
	if f.hostProc != nil {
		ps = append(ps, probe{name: "ps -E of a host process (KERN_PROCARGS2)", script: fmt.Sprintf("ps -Eww -p %d; ps -Ewwax | grep -c HARNESS_BATTERY_CANARY", f.hostProc.Process.Pid), check: lacks(f.key)},
			probe{name: "signal a host process", script: fmt.Sprintf("kill -9 %d", f.hostProc.Process.Pid), check: func(*Result) string {
				time.Sleep(100 * time.Millisecond)
				var ws syscall.WaitStatus
				if pid, _ := syscall.Wait4(f.hostProc.Process.Pid, &ws, syscall.WNOHANG, nil); pid == f.hostProc.Process.Pid {
					f.hostProc = nil // reaped here
					return "killed a process outside the sandbox"
				}
				return ""
			}})
	}
	if helper == "" {
		return append(ps, probe{name: "helper probes", skip: "the harness binary is unknown"})
	}
	h := q(helper) + " " + probeArg + " "
	ran := func(check func(*Result) string) func(*Result) string {
		return func(r *Result) string {
			if !bytes.Contains(r.Output, []byte("denied:")) && !bytes.Contains(r.Output, []byte("ESCAPED")) && !bytes.Contains(r.Output, []byte("works")) {
				return "the probe did not run: " + firstLine(r.Output)
			}
			return check(r)
		}
	}
	noEscape := func(r *Result) string {
		if bytes.Contains(r.Output, []byte("ESCAPED")) {
			return firstLine(r.Output[bytes.Index(r.Output, []byte("ESCAPED")):])
		}
		return ""
	}
	works := func(what string) func(*Result) string {
		return func(r *Result) string {
			if !bytes.Contains(r.Output, []byte("works")) {
				return what + " does not work inside: " + firstLine(r.Output)
			}
			return ""
		}
	}
	ps = append(ps,
		probe{name: "TCP to a host loopback listener", script: h + "connect-tcp " + q(f.tcpLn.Addr().String()), check: ran(func(r *Result) string {
			if accepted(f.tcpLn) {
				return "a host listener accepted a connection"
			}
			return noEscape(r)
		})},
		probe{name: "a pty made inside (must work)", script: h + "own-pty", check: ran(works("a pseudo-terminal"))},
		probe{name: "unix sockets in $TMPDIR (must work)", script: h + "unix-loopback \"$TMPDIR\"", check: ran(works("the private loopback"))},
		probe{name: "unix socket outside $TMPDIR", script: h + "unix-loopback " + q(f.proj), check: ran(func(r *Result) string {
			if bytes.Contains(r.Output, []byte("works")) {
				return "a unix socket was bound outside the session's directory"
			}
			return ""
		})},
	)
	if f.unixLn != nil {
		ps = append(ps, probe{name: "host unix socket", script: h + "connect-unix " + q(filepath.Join(f.base, "host.sock")), check: ran(func(r *Result) string {
			if accepted(f.unixLn) {
				return "a host listener accepted a connection"
			}
			return noEscape(r)
		})})
	}
	if f.hostProc != nil {
		ps = append(ps, probe{name: "sysctl kern.procargs2 of a host process", script: h + fmt.Sprintf("procargs %d", f.hostProc.Process.Pid), check: ran(noEscape)})
	}
	tty := probe{name: "the user's terminal (/dev/tty, a host pty)", skip: "could not open a host pty"}
	if f.ptySlave != nil {
		tty = probe{name: "the user's terminal (/dev/tty, a host pty)", script: h + "open-tty /dev/tty; " + h + "open-tty " + q(f.ptySlave.Name()), check: ran(noEscape)}
	}
	return append(ps, tty)
}

func port(l net.Listener) string {
	if l == nil {
		return "0"
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}
