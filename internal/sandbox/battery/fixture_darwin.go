package battery

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/seatbelt"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/shellquote"
)

// The darwin battery's world (the runner is battery.go's): besides the
// common fixture, a keychain and a key behind a link in ~/.ssh, a
// worktree's pointer file, a host terminal, a host process holding a canary
// in its environment and a host listener posing as a certificate server.
// Several probes settle what only a Mac can: case folding, firmlinks, hard
// links and clones, the name patterns compiling, fresh binaries running,
// the grants ordinary tools need.

type darwinFixture struct {
	*baseFixture
	dotfiles, keychain, linked string
	ptyMaster, ptySlave        *os.File
	hostProc                   *exec.Cmd
	certLn                     net.Listener // where a fetching trustd would connect
}

const (
	hookText   = "#!/bin/sh\necho original hook\n"
	configText = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .githooks\n"
)

func newBatteryFixture() (batteryFixture, error) {
	b, err := newBaseFixture(func(b *baseFixture) map[string]string {
		return map[string]string{
			filepath.Join(b.home, "Library", "Keychains", "login.keychain"): "keychain-canary-" + b.tag,
			filepath.Join(b.base, "dotfiles", "id_ed25519"):                 "linked-canary-" + b.tag,
			filepath.Join(b.proj, "wt", ".git"):                             "gitdir: " + filepath.Join(b.base, "wt-gitdir") + "\n",
			filepath.Join(b.base, "wt-gitdir", "HEAD"):                      "ref: refs/heads/wt\n",
			filepath.Join(b.base, "wt-gitdir", "config"):                    "[core]\n",
		}
	})
	if err != nil {
		return nil, err
	}
	f := &darwinFixture{baseFixture: b, dotfiles: filepath.Join(b.base, "dotfiles"),
		keychain: "keychain-canary-" + b.tag, linked: "linked-canary-" + b.tag}
	f.resetGit()
	if err := os.Symlink(filepath.Join(f.dotfiles, "id_ed25519"), filepath.Join(f.home, ".ssh", "id_ed25519")); err != nil {
		f.close()
		return nil, err
	}
	f.ptyMaster, f.ptySlave, _ = inner.OpenPty()
	f.certLn, _ = net.Listen("tcp", "127.0.0.1:0")
	// A host process with a canary in its environment: its arguments and
	// environment (KERN_PROCARGS2, ps -E) must stay unreadable inside.
	f.hostProc = exec.Command("/bin/sleep", "300")
	f.hostProc.Env = []string{"HARNESS_BATTERY_CANARY=" + f.key}
	if f.hostProc.Start() != nil {
		f.hostProc = nil
	}
	return f, nil
}

func (f *darwinFixture) policyOptions() walls.PolicyOptions {
	return walls.PolicyOptions{Project: f.proj, Home: f.home, Environ: f.environ(), Timeout: 30 * time.Second}
}

func batteryMode(sandbox.Sandbox) string { return " (a sandbox per command)" }

func batteryHeader(sb sandbox.Sandbox) []string {
	return []string{"resource bounds: " + sb.Policy().LimitsText()}
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

func (f *darwinFixture) close() {
	if f.certLn != nil {
		f.certLn.Close()
	}
	if f.ptyMaster != nil {
		f.ptyMaster.Close()
		f.ptySlave.Close()
	}
	if f.hostProc != nil {
		f.hostProc.Process.Kill()
		f.hostProc.Wait()
	}
	f.baseFixture.close()
}

// survivors counts host processes whose command line holds marker (ps runs
// on the host, outside the walls), waiting up to grace.
func survivors(marker string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		out, _ := exec.Command("/bin/ps", "-axww", "-o", "command=").Output()
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, marker) && !strings.Contains(l, inner.ProbeArg) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// probes lists the darwin attempts. Each comment in the list says what a
// held probe proves; "must work" probes prove a grant ordinary tools need.
func (f *darwinFixture) probes(sb sandbox.Sandbox, helper string) []probe {
	q := shellquote.Quote
	outsideSame := checkUnchanged(f.outside, "original")
	gitIntact := func(*sandbox.Result) string {
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
	firm := func(p string) string { return seatbelt.FirmlinkData + p }
	marker := "harness-battery-marker-" + f.tag
	sleeper := fmt.Sprintf("sh -c 'sleep 300; : %s'", marker)
	h := helperCommand(helper)
	// Names APFS folds onto .githooks: the Kelvin sign for k, the long s for s.
	kelvin, longS := `"$(printf '.githoo\342\204\252s')"`, `"$(printf '.githook\305\277')"`
	// Python is only run where it is real: /usr/bin/python3 without the
	// command-line tools is a stub that asks to install them.
	py := `if xcode-select -p >/dev/null 2>&1 && command -v python3 >/dev/null; then python3 -c "$PROBE"; else echo "$OK (no python3)"; fi`

	ps := append(f.commonProbes("/private/etc/harness-battery-"+f.tag, h),
		// /tmp is the host's on macOS: only $TMPDIR is private.
		probe{name: "/tmp is not writable (only $TMPDIR)", script: "echo x > /tmp/harness-battery-" + f.tag, check: checkAbsent("/private/tmp/harness-battery-" + f.tag)},
		probe{name: "$TMPDIR writable and private (must work)", script: "echo private-" + f.tag + " > \"$TMPDIR/battery\" && cat \"$TMPDIR/battery\"",
			check: checkHolds("$TMPDIR", "private-"+f.tag)},
		probe{name: "$TMPDIR survives between commands (must work)", script: "cat \"$TMPDIR/battery\"", check: checkHolds("$TMPDIR", "private-"+f.tag)},
		// Existing carve-outs by subpath.
		probe{name: ".git hook and config writes", before: f.resetGit,
			script: "echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo evil > sub/.git/hooks/pre-commit; echo evil > .agents/conf; chmod 777 .git/hooks/pre-commit",
			check:  gitIntact},
		// The kernel's case folding meets the profile's subpaths.
		probe{name: "case-folded carve-outs (.GIT, .Agents)", before: f.resetGit,
			script: "echo evil > .GIT/hooks/pre-commit; echo evil >> .Git/config; echo evil > SUB/.gIt/HOOKS/pre-commit; echo evil > .AGENTS/conf",
			check:  gitIntact},
		// Firmlinks: the Data volume's spelling of the same files.
		probe{name: "firmlink spelling (/System/Volumes/Data)", before: f.resetGit,
			script: "echo evil > " + q(firm(f.proj)+"/.git/hooks/pre-commit") + "; echo evil > " + q(firm(f.home)+"/escaped") + "; cat " + q(firm(f.home)+"/.ssh/id_rsa"),
			check:  checkAll(gitIntact, checkAbsent(f.home+"/escaped"), checkLacks(f.sshKey))},
		// Renaming or removing a carve-out or its parent.
		probe{name: "mv .git, rm -rf .git", before: f.resetGit, script: "mv .git git-moved; rm -rf sub/.git .agents", check: func(r *sandbox.Result) string {
			if !exists(filepath.Join(f.proj, ".git", "HEAD")) || !exists(filepath.Join(f.proj, "sub", ".git", "HEAD")) {
				return ".git was removed"
			}
			return gitIntact(r)
		}},
		// The name pattern compiles and holds for repositories not there yet.
		probe{name: "new repository (.git, .GIT, git init) by name pattern",
			script: "mkdir -p new1/.git new2/.GIT; echo 'gitdir: /tmp' > new3.git; mkdir new4 && echo 'gitdir: ../x' > new4/.Git; if xcode-select -p >/dev/null 2>&1; then git init -q new5 2>/dev/null; fi",
			check:  checkAbsent(f.proj+"/new1/.git", f.proj+"/new2/.GIT", f.proj+"/new4/.Git", f.proj+"/new5/.git")},
		// A protected path not there yet, in every spelling APFS takes for it.
		probe{name: "missing hooksPath target (.githooks, .GITHOOKS, Kelvin k, long s)",
			script: "mkdir -p .githooks; echo evil > .githooks/pre-commit; mkdir -p .GITHOOKS; echo evil > .GITHOOKS/pre-commit; mkdir " + kelvin + "; mkdir " + longS + "; ls -a",
			check: func(r *sandbox.Result) string {
				ents, _ := os.ReadDir(f.proj)
				for _, e := range ents {
					if strings.EqualFold(walls.FoldKey(e.Name()), walls.FoldKey(".githooks")) {
						os.RemoveAll(filepath.Join(f.proj, e.Name()))
						return fmt.Sprintf("created %q on the host", e.Name())
					}
				}
				return ""
			}},
		// A worktree's pointer file and the gitdir it names.
		probe{name: "pointer file and its gitdir", before: f.resetGit,
			script: "echo 'gitdir: /tmp/evil' > wt/.git; echo evil > " + q(f.base+"/wt-gitdir/HEAD") + "; echo evil > WT/.GIT",
			check:  gitIntact},
		// Hard links and APFS clones carry no path of their own.
		probe{name: "hard link to a protected file", before: f.resetGit, script: "ln .git/config cfg-link; echo evil >> cfg-link; ln .git/hooks/pre-commit hook-link; echo evil > hook-link",
			check: gitIntact},
		probe{name: "hard link and clone of a secret", script: "ln " + q(f.home+"/.ssh/id_rsa") + " k1; cat k1; cp -c " + q(f.home+"/.ssh/id_rsa") + " k2; cat k2",
			check: checkLacks(f.sshKey)},
		probe{name: "clone of a protected file", before: f.resetGit, script: "cp -c .git/config cfg-clone && echo evil >> cfg-clone; cp -c " + q(f.outside) + " out-clone && echo evil >> out-clone",
			check: checkAll(gitIntact, outsideSame)},
		probe{name: "secrets in another case (.SSH, .Agents/ENV)", script: "cat " + q(f.home+"/.SSH/id_rsa") + " " + q(f.home+"/.Agents/ENV") + " " + q(f.home+"/.\u017f\u017fh/id_rsa"),
			check: checkLacks(f.sshKey, f.agentsEnv)},
		probe{name: "keychains unreadable", script: "cat " + q(f.home+"/Library/Keychains/login.keychain") + "; ls " + q(f.home+"/Library/Keychains"), check: checkLacks(f.keychain)},
		// Seatbelt judges the resolved path: the link's target is hidden too.
		probe{name: "a link inside ~/.ssh to a key elsewhere", script: "cat " + q(f.home+"/.ssh/id_ed25519") + " " + q(f.dotfiles+"/id_ed25519"), check: checkLacks(f.linked)},
		probe{name: "environment holds no API key", script: "env", check: checkLacks(f.key)},
		// Mapping a binary made inside as executable.
		probe{name: "executing a freshly built binary (must work)",
			script: "cp /bin/echo \"$TMPDIR/fresh\" && \"$TMPDIR/fresh\" fresh-tmp; cp /bin/echo ./fresh && ./fresh fresh-proj; " +
				"if xcode-select -p >/dev/null 2>&1; then printf 'int main(void){return 0;}' > \"$TMPDIR/t.c\" && cc -o \"$TMPDIR/t\" \"$TMPDIR/t.c\" && \"$TMPDIR/t\" && echo built-ok; else echo built-ok; fi",
			check: checkHolds("running a binary made inside", "fresh-tmp", "fresh-proj", "built-ok")},
		// The named sysctls suffice for the usual tools.
		probe{name: "named sysctls (must work)", script: "sysctl -n hw.ncpu hw.memsize kern.osrelease && uname -a && echo sysctl-ok", check: checkHolds("sysctl", "sysctl-ok")},
		// The sandbox's own process info (ps of itself) and preference reads.
		probe{name: "own process info, preference reads (must work)", script: "ps -o pid=,comm= -p $$ && echo ps-ok; defaults read -g AppleLocale >/dev/null 2>&1; defaults read -g >/dev/null && echo prefs-ok",
			check: checkHolds("ps of the command itself or defaults read", "ps-ok", "prefs-ok")},
		// POSIX semaphores (multiprocessing's SemLock) and OpenMP's shared
		// memory name.
		probe{name: "POSIX semaphores, OpenMP shared memory (must work)",
			script: "OK=ipc-ok PROBE='import multiprocessing as m, os, _posixshmem as s\nl = m.Lock(); l.acquire(); l.release()\nn = \"/__KMP_REGISTERED_LIB_%d\" % os.getpid()\nfd = s.shm_open(n, os.O_CREAT | os.O_RDWR, 0o600); os.close(fd); s.shm_unlink(n)\nprint(\"ipc-ok\")'; " + py,
			check:  checkHolds("a POSIX semaphore or the OpenMP shared memory name", "ipc-ok")},
		// The caches the environment names are writable where darwin's
		// toolchains look (not ~/Library/Caches, read-only inside).
		probe{name: "build caches writable (must work)",
			script: `for v in GOCACHE XDG_CACHE_HOME npm_config_cache PIP_CACHE_DIR CLANG_MODULE_CACHE_PATH STATICCHECK_CACHE GOLANGCI_LINT_CACHE YARN_CACHE_FOLDER SWIFTPM_CACHE_DIR PYTHONPYCACHEPREFIX; do eval d=\$$v; mkdir -p "$d" && touch "$d/.harness-probe" || echo "unwritable $v=$d"; done; if command -v go >/dev/null; then d=$(go env GOCACHE) && mkdir -p "$d" && touch "$d/.harness-probe" || echo "unwritable go env GOCACHE"; fi; echo caches-done`,
			check: func(r *sandbox.Result) string {
				if !bytes.Contains(r.Output, []byte("caches-done")) || bytes.Contains(r.Output, []byte("unwritable")) {
					return "a build cache is not writable inside: " + backend.FirstLine(r.Output)
				}
				return ""
			}},
		probe{name: "pasteboard and Apple Events", script: "pbpaste 2>/dev/null; echo; osascript -e 'tell application \"Finder\" to get name' >/dev/null 2>&1; echo \"as=$?\"",
			check: func(r *sandbox.Result) string {
				if bytes.Contains(r.Output, []byte("as=0")) {
					return "an Apple Event reached Finder"
				}
				host, _ := exec.Command("/usr/bin/pbpaste").Output()
				if len(bytes.TrimSpace(host)) > 0 && bytes.Contains(r.Output, bytes.TrimSpace(host)) {
					return "read the user's pasteboard"
				}
				return ""
			}},
		// kqueue tracking: setsid, nohup and fork-setsid-exit children die
		// with the command's timeout and with its exit.
		probe{name: "timeout kills setsid/nohup/double-fork children", timeout: 2 * time.Second,
			script: sleeper + " & nohup " + sleeper + " >/dev/null 2>&1 & (" + sleeper + " &) ; perl -e 'use POSIX; fork and exit; POSIX::setsid(); exec \"sh\", \"-c\", \"sleep 300; : " + marker + "\"' ; sleep 300",
			check: func(r *sandbox.Result) string {
				if !r.TimedOut {
					return fmt.Sprintf("the command was not timed out (exit %d)", r.ExitCode)
				}
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes survived the timeout", n)
				}
				return ""
			}},
		probe{name: "exit kills what the command left running",
			script: "(" + sleeper + " &) ; nohup " + sleeper + " >/dev/null 2>&1 & perl -e 'use POSIX; fork and exit; POSIX::setsid(); exec \"sh\", \"-c\", \"sleep 300; : " + marker + "-x\"' ; echo started",
			check: func(r *sandbox.Result) string {
				if n := survivors(marker, 3*time.Second); n > 0 {
					return fmt.Sprintf("%d processes outlived their command", n)
				}
				return ""
			}},
	)
	if f.hostProc != nil {
		ps = append(ps, probe{name: "ps -E of a host process (KERN_PROCARGS2)", script: fmt.Sprintf("ps -Eww -p %d; ps -Ewwax | grep -c HARNESS_BATTERY_CANARY", f.hostProc.Process.Pid), check: checkLacks(f.key)},
			probe{name: "signal a host process", script: fmt.Sprintf("kill -9 %d", f.hostProc.Process.Pid), check: func(*sandbox.Result) string {
				time.Sleep(100 * time.Millisecond)
				var ws syscall.WaitStatus
				if pid, _ := syscall.Wait4(f.hostProc.Process.Pid, &ws, syscall.WNOHANG, nil); pid == f.hostProc.Process.Pid {
					f.hostProc = nil // reaped here
					return "killed a process outside the sandbox"
				}
				return ""
			}})
	}
	if h == "" {
		return append(ps, probe{name: "helper probes", skip: "the harness binary is unknown"})
	}
	ps = append(ps,
		probe{name: "a pty made inside (must work)", script: h + "own-pty", check: helperRan(helperWorks("a pseudo-terminal"))},
		probe{name: "unix sockets in $TMPDIR (must work)", script: h + "unix-loopback \"$TMPDIR\"", check: helperRan(helperWorks("the private loopback"))},
		probe{name: "unix socket outside $TMPDIR", script: h + "unix-loopback " + q(f.proj), check: helperRan(func(r *sandbox.Result) string {
			if bytes.Contains(r.Output, []byte("works")) {
				return "a unix socket was bound outside the session's directory"
			}
			return ""
		})},
		// A new session: no controlling terminal, no job control over harness's.
		probe{name: "commands start in a new session", script: h + fmt.Sprintf("session %d", hostSession()), check: helperRan(noEscape)},
	)
	trustd := probe{name: "trustd fetching for a command (no network)", skip: "could not listen on the host"}
	if f.certLn != nil {
		// A certificate whose issuer is missing, its URL at a host
		// listener: a reachable trustd would fetch it from outside.
		trustd = probe{name: "trustd fetching for a command (no network)", timeout: 20 * time.Second,
			script: h + "trustd-fetch " + q("http://"+f.certLn.Addr().String()), check: helperRan(checkAll(noEscape, checkNoConn(f.certLn)))}
	}
	ps = append(ps, trustd)
	if f.hostProc != nil {
		ps = append(ps, probe{name: "sysctl kern.procargs2 of a host process", script: h + fmt.Sprintf("procargs %d", f.hostProc.Process.Pid), check: helperRan(noEscape)})
	}
	tty := probe{name: "the user's terminal (/dev/tty, a host pty)", skip: "could not open a host pty"}
	if f.ptySlave != nil {
		tty = probe{name: "the user's terminal (/dev/tty, a host pty)", script: h + "open-tty /dev/tty; " + h + "open-tty " + q(f.ptySlave.Name()), check: helperRan(noEscape)}
	}
	return append(ps, tty, modeProbe(sb, f.proj, f.tag))
}

// hostSession is harness's own session id.
func hostSession() int {
	sid, _ := syscall.Getsid(0)
	return sid
}

// helperWorks fails when a helper probe for a grant did not print works.
func helperWorks(what string) func(*sandbox.Result) string {
	return func(r *sandbox.Result) string {
		if !bytes.Contains(r.Output, []byte("works")) {
			return what + " does not work inside: " + backend.FirstLine(r.Output)
		}
		return ""
	}
}
