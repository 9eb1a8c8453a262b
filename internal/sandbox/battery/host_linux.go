package battery

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/shellquote"
)

// raceAttempts is how many file-tool operations race the flipper.
const raceAttempts = 400

// hostProbes are the battery's attacks on the host side.
func (f *fixture) hostProbes(sb sandbox.Sandbox, helper string) []probe {
	live := sb.Live() // each probe reads the rules as they stand then (Keep changes them)
	q := shellquote.Quote
	race := filepath.Join(f.proj, "race")
	h := helperCommand(helper)

	// flipping runs the flipper (A and B swapped by RENAME_EXCHANGE)
	// inside the sandbox while attempt runs on the host raceAttempts
	// times; it waits until the swap is seen before starting.
	flipping := func(ctx context.Context, a, b string, attempt func() bool) (wins, refused int, problem string) {
		fctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var out *sandbox.Result
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _ = sb.Run(fctx, sandbox.Cmd{Script: h + "flip " + q(a) + " " + q(b) + " 60", Timeout: 90 * time.Second})
		}()
		first, _ := os.Lstat(a)
		seen := false
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			if st, err := os.Lstat(a); err == nil && first != nil && !os.SameFile(st, first) {
				seen = true
				break
			}
			time.Sleep(time.Millisecond)
		}
		if !seen {
			cancel()
			wg.Wait()
			msg := "the flipper never swapped the names"
			if out != nil {
				msg += ": " + backend.FirstLine(out.Output)
			}
			return 0, 0, msg
		}
		for range raceAttempts {
			if attempt() {
				wins++
			} else {
				refused++
			}
		}
		cancel()
		wg.Wait()
		return wins, refused, ""
	}

	reset := func() {
		os.RemoveAll(race)
		os.MkdirAll(race, 0o755)
	}
	ps := []probe{
		{name: "file tools: read vs a symlink flipper", host: func(ctx context.Context) (string, string) {
			reset()
			benign, link := filepath.Join(race, "file"), filepath.Join(race, "link")
			os.WriteFile(benign, []byte("benign"), 0o644)
			os.Symlink(filepath.Join(f.home, ".ssh", "id_rsa"), link)
			leaked, ok := 0, 0
			_, _, problem := flipping(ctx, benign, link, func() bool {
				b, _, err := live.Policy().ReadFile(benign, 1<<20)
				if bytes.Contains(b, []byte(f.sshKey)) {
					leaked++
				}
				if err == nil {
					ok++
				}
				return err == nil
			})
			if problem != "" {
				return problem, ""
			}
			if leaked > 0 {
				return fmt.Sprintf("read_file returned the ssh key %d times in %d attempts", leaked, raceAttempts), ""
			}
			return "", fmt.Sprintf("%d attempts, %d read the benign file, %d refused, 0 leaked", raceAttempts, ok, raceAttempts-ok)
		}},
		{name: "file tools: write vs a symlink flipper", host: func(ctx context.Context) (string, string) {
			reset()
			f.resetGit()
			benign, link := filepath.Join(race, "file"), filepath.Join(race, "link")
			os.WriteFile(benign, []byte("benign"), 0o644)
			os.Symlink(filepath.Join(f.proj, ".git", "config"), link)
			dir, dlink := filepath.Join(race, "dir"), filepath.Join(race, "dlink")
			os.Mkdir(dir, 0o755)
			os.Symlink(f.sibling, dlink)
			ok := 0
			_, _, problem := flipping(ctx, benign, link, func() bool {
				_, err := live.WriteFile(benign, []byte("pwned"))
				if err == nil {
					ok++
				}
				return err == nil
			})
			if problem != "" {
				return problem, ""
			}
			dok := 0
			_, _, problem = flipping(ctx, dir, dlink, func() bool {
				_, err := live.WriteFile(filepath.Join(dir, "keep"), []byte("pwned"))
				if err == nil {
					dok++
				}
				return err == nil
			})
			if problem != "" {
				return problem, ""
			}
			if c := content(filepath.Join(f.proj, ".git", "config")); c != configText {
				return fmt.Sprintf("write_file replaced .git/config: %q", c), ""
			}
			if c := content(filepath.Join(f.sibling, "keep")); c != "original" {
				return fmt.Sprintf("write_file wrote outside the project: %q", c), ""
			}
			ents, _ := os.ReadDir(f.sibling)
			if len(ents) != 1 {
				return fmt.Sprintf("write_file left %d entries beside the project", len(ents)-1), ""
			}
			return "", fmt.Sprintf("%d+%d attempts, %d+%d wrote inside the project, 0 outside", raceAttempts, raceAttempts, ok, dok)
		}},
		{name: "file tools: devices, FIFOs, huge files", host: func(ctx context.Context) (string, string) {
			reset()
			fifo := filepath.Join(race, "fifo")
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				return "", "" // no FIFO here: nothing to try
			}
			sparse := filepath.Join(race, "sparse")
			if sf, err := os.Create(sparse); err == nil {
				sf.Truncate(2 << 30)
				sf.Close()
			}
			os.Symlink("/dev/zero", filepath.Join(race, "zero-link"))
			if os.Geteuid() == 0 {
				// Root-run harness: another user's private file, which a
				// command (no capabilities) cannot read either.
				other := filepath.Join(race, "others-0600")
				os.WriteFile(other, []byte("private"), 0o600)
				os.Chown(other, 65534, 65534)
			}
			cases := []string{"/dev/zero", "/dev/stdin", "/dev/fd/0", "/proc/self/environ", "/proc/self/fd/0",
				"/proc/kallsyms", fifo, sparse, filepath.Join(race, "zero-link"), "/dev/tty"}
			if os.Geteuid() == 0 {
				cases = append(cases, filepath.Join(race, "others-0600"))
			}
			var bad []string
			for _, c := range cases {
				done := make(chan error, 1)
				go func() {
					_, _, err := live.Policy().ReadFile(c, 64<<20)
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil {
						bad = append(bad, c+" was read")
					}
				case <-time.After(10 * time.Second):
					bad = append(bad, c+" hung")
				}
			}
			if len(bad) > 0 {
				return strings.Join(bad, "; "), ""
			}
			return "", fmt.Sprintf("%d refused at once", len(cases))
		}},
		{name: "kill a leader that ended its main thread", host: func(ctx context.Context) (string, string) {
			tag := "zl-" + f.tag
			r, err := sb.Run(ctx, sandbox.Cmd{Script: "(" + h + "zombie-leader " + tag + " &) ; sleep 0.3"})
			if err != nil {
				return err.Error(), ""
			}
			if n := threadSurvivors(tag, 3*time.Second); n > 0 {
				return fmt.Sprintf("%d threads ran on after the command ended (exit %d)", n, r.ExitCode), ""
			}
			r, err = sb.Run(ctx, sandbox.Cmd{Script: h + "zombie-leader " + tag + " & sleep 300", Timeout: time.Second})
			if err != nil {
				return err.Error(), ""
			}
			if !r.TimedOut {
				return "the command did not time out", ""
			}
			if n := threadSurvivors(tag, 3*time.Second); n > 0 {
				return fmt.Sprintf("%d threads ran on after the timeout", n), ""
			}
			return "", ""
		}},
	}
	ps = append(ps, probe{name: "resource bounds in force inside", host: func(ctx context.Context) (string, string) {
		r, err := sb.Run(ctx, sandbox.Cmd{Script: "cat /proc/self/limits"})
		if err != nil {
			return err.Error(), ""
		}
		var bad []string
		nproc := live.Policy().MaxProcs()
		if !sandbox.IsContainer(sb.Backend()) {
			nproc = sandbox.Inspect(sb).Cgroup.NprocRlimit(nproc) // a backstop where a cgroup holds the bound
		}
		for name, want := range map[string]int64{"Max processes": int64(nproc), "Max data size": live.Policy().MaxMemory()} {
			if want <= 0 {
				continue
			}
			line := ""
			for _, l := range strings.Split(string(r.Output), "\n") {
				if strings.HasPrefix(l, name) {
					line = l
				}
			}
			if f := strings.Fields(strings.TrimPrefix(line, name)); len(f) < 1 || f[0] != fmt.Sprint(want) {
				bad = append(bad, fmt.Sprintf("%s is %q, want %d", name, strings.TrimSpace(strings.TrimPrefix(line, name)), want))
			}
		}
		if len(bad) > 0 {
			return strings.Join(bad, "; "), ""
		}
		return "", fmt.Sprintf("RLIMIT_NPROC %d, RLIMIT_DATA %d MiB", nproc, live.Policy().MaxMemory()>>20)
	}})
	ps = append(ps, cgroupProbe(sb), f.gitProbe(sb), probe{name: "other sessions' spill files hidden, this one's kept", host: func(ctx context.Context) (string, string) {
		base := filepath.Join(f.home, ".cache", "harness", "spill")
		other, mine := filepath.Join(base, "other", "1.txt"), filepath.Join(base, "mine", "1.txt")
		os.MkdirAll(filepath.Dir(mine), 0o700)
		os.WriteFile(mine, []byte("mine-"+f.tag), 0o600)
		live.Keep(filepath.Dir(mine))
		r, err := sb.Run(ctx, sandbox.Cmd{Script: "cat " + q(other) + " " + q(mine) + "; ls " + q(base)})
		if err != nil {
			return err.Error(), ""
		}
		if bytes.Contains(r.Output, []byte("spill-canary-"+f.tag)) {
			return "a command read another session's spill file", ""
		}
		if b, _, err := live.Policy().ReadFile(other, 1<<20); err == nil || bytes.Contains(b, []byte("spill-canary")) {
			return "read_file read another session's spill file", ""
		}
		if !bytes.Contains(r.Output, []byte("mine-"+f.tag)) {
			return "this session's spill file is not readable: " + backend.FirstLine(r.Output), ""
		}
		if _, _, err := live.Policy().ReadFile(mine, 1<<20); err != nil {
			return "read_file cannot read this session's spill file: " + err.Error(), ""
		}
		return "", ""
	}})
	ps = append(ps, probe{name: "file tools and loaders refuse secrets, by link too", host: func(ctx context.Context) (string, string) {
		// What instructions (AGENTS.md), skills and read_file go through.
		link := filepath.Join(f.proj, "AGENTS.md")
		os.Remove(link)
		if err := os.Symlink(filepath.Join(f.home, ".agents", "env"), link); err != nil {
			return err.Error(), ""
		}
		defer os.Remove(link)
		paths := []string{link, filepath.Join(f.home, ".ssh", "id_rsa")}
		for _, rel := range otherSecrets {
			paths = append(paths, filepath.Join(f.home, rel))
		}
		for _, p := range paths {
			if b, _, err := live.Policy().ReadFile(p, 1<<20); err == nil || bytes.Contains(b, []byte("canary")) {
				return "read through the policy: " + p, ""
			}
			if fh, _, _, err := live.Policy().OpenRead(p); err == nil {
				fh.Close()
				return "opened through the policy: " + p, ""
			}
		}
		return "", fmt.Sprintf("%d refused", len(paths))
	}}, probe{name: "sub-agents' bash (read-only walls) writes nothing", host: func(ctx context.Context) (string, string) {
		if !sandbox.CanReadOnly(sb) {
			return "", "no read-only variant: sub-agents get no bash"
		}
		readme := filepath.Join(f.proj, "README")
		r, err := sb.Run(ctx, sandbox.Cmd{ReadOnly: true, Script: "cat README; echo evil > README; echo evil > ro-new; echo evil >> .git/config; echo ok > \"${TMPDIR:-/tmp}/ro\" && echo tmp-ok"})
		if err != nil {
			return err.Error(), ""
		}
		if content(readme) != "project" || exists(filepath.Join(f.proj, "ro-new")) || content(filepath.Join(f.proj, ".git", "config")) != configText {
			os.WriteFile(readme, []byte("project"), 0o600)
			os.Remove(filepath.Join(f.proj, "ro-new"))
			return "a read-only command wrote the project: " + backend.FirstLine(r.Output), ""
		}
		if !bytes.Contains(r.Output, []byte("tmp-ok")) {
			return "a read-only command could not write /tmp: " + backend.FirstLine(r.Output), ""
		}
		return "", ""
	}})
	if helper == "" {
		for i := range ps {
			ps[i].skip = "no helper to run the accomplice"
		}
	}
	return ps
}

// threadSurvivors counts threads whose command line holds marker, waiting
// up to grace for them to go. It reads each thread's own cmdline: a
// zombie leader's /proc/<pid>/cmdline is empty.
func threadSurvivors(marker string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if strings.Trim(e.Name(), "0123456789") != "" {
				continue
			}
			tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
			for _, t := range tasks {
				b, err := os.ReadFile("/proc/" + e.Name() + "/task/" + t.Name() + "/cmdline")
				if err == nil && bytes.Contains(b, []byte(marker)) {
					n++
				}
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gitProbe plants a clean filter, an fsmonitor and a hook in a repository
// created mid-session, each writing a marker outside the project (where
// only the host can write), then runs harness's own git status the way a
// session does (sandbox.Git, inside the walls): no marker may appear, and the
// repository must be reported with what it would run and be read-only
// from the next command on.
func (f *fixture) gitProbe(sb sandbox.Sandbox) probe {
	pr := probe{name: "git of the agent's making never runs on the host"}
	if _, err := exec.LookPath("git"); err != nil {
		pr.skip = "git is not installed"
		return pr
	}
	pr.host = func(ctx context.Context) (string, string) {
		repo := filepath.Join(f.proj, "agent-repo")
		os.RemoveAll(repo)
		marks := map[string]string{}
		for _, k := range []string{"filter", "fsmonitor", "hook"} {
			marks[k] = filepath.Join(f.sibling, "ran-"+k+"-"+f.tag)
		}
		q := shellquote.Quote
		script := "git init -q " + q(repo) + " && cd " + q(repo) +
			" && git config filter.x.clean " + q("touch "+q(marks["filter"])+"; cat") +
			" && git config core.fsmonitor " + q("touch "+q(marks["fsmonitor"])) +
			" && printf '#!/bin/sh\\ntouch %s\\n' " + q(q(marks["hook"])) + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit" +
			" && echo '* filter=x' > .gitattributes && echo a > a && git -c core.fsmonitor= add a .gitattributes && echo b >> a; echo planted"
		r, err := sb.Run(ctx, sandbox.Cmd{Script: script})
		if err != nil {
			return err.Error(), ""
		}
		if !bytes.Contains(r.Output, []byte("planted")) {
			return "the repository could not be planted: " + backend.FirstLine(r.Output), ""
		}
		var found *walls.Finding
		for i, fd := range r.Found {
			if fd.Path == filepath.Join(repo, ".git") {
				found = &r.Found[i]
			}
		}
		if found == nil {
			return fmt.Sprintf("the new repository was not reported (found %v)", r.Found), ""
		}
		runs := strings.Join(found.RunsCode, " ")
		for _, want := range []string{"filter.x.clean", "core.fsmonitor", "hooks/pre-commit"} {
			if !strings.Contains(runs, want) {
				return fmt.Sprintf("the report misses %s: %s", want, found), ""
			}
		}
		// What the reminder runs every turn.
		sandbox.Git(ctx, sb, repo, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
		sandbox.Git(ctx, sb, repo, "diff", "--stat")
		for k, m := range marks {
			if exists(m) {
				return "the planted " + k + " ran on the host", ""
			}
		}
		before := content(filepath.Join(repo, ".git", "config"))
		sb.Run(ctx, sandbox.Cmd{Script: "echo '[core]' >> " + q(filepath.Join(repo, ".git", "config"))})
		if content(filepath.Join(repo, ".git", "config")) != before {
			return "the new repository's config stayed writable after it was reported", ""
		}
		return "", "reported: " + runs
	}
	return pr
}
