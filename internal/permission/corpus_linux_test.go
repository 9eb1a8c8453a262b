package permission

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/harness-dev/harness/internal/testenv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/shellquote"
)

// corpusCase is one line of testdata/corpus.txt.
type corpusCase struct {
	line    int
	source  string
	verdict Verdict
	runner  bool
	rule    string
	cmd     string
}

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	source := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "## source: "); ok {
			source = s
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " | ", 3)
		if len(parts) != 3 {
			t.Fatalf("corpus.txt:%d: want VERDICT | RULE | COMMAND", n)
		}
		c := corpusCase{line: n, source: source, rule: parts[1], cmd: parts[2]}
		v, runner := strings.CutSuffix(parts[0], " runner")
		c.runner = runner
		switch v {
		case "allow":
			c.verdict = Allow
		case "ask":
			c.verdict = Ask
		case "deny":
			c.verdict = Deny
		default:
			t.Fatalf("corpus.txt:%d: verdict %q", n, parts[0])
		}
		if strings.HasPrefix(c.cmd, `"`) {
			if c.cmd, err = strconv.Unquote(c.cmd); err != nil {
				t.Fatalf("corpus.txt:%d: %v", n, err)
			}
		}
		out = append(out, c)
	}
	return out
}

// corpusProject makes the throwaway project the corpus describes and
// returns its policy (session start is now).
func corpusProject(t *testing.T) (pol *walls.Policy, proj string) {
	t.Helper()
	return corpusProjectFor(t, t)
}

// corpusProjectFor fails t but leaves the project to owner's cleanup: a
// subtest may make the project the next subtests use.
func corpusProjectFor(t, owner *testing.T) (pol *walls.Policy, proj string) {
	t.Helper()
	base, err := os.MkdirTemp(outsideTmp(), "harness-corpus-")
	if err != nil {
		t.Fatal(err)
	}
	owner.Cleanup(func() { os.RemoveAll(base) })
	base, _ = filepath.EvalSymlinks(base)
	proj, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	tmpl := map[string]string{
		"main.go":   "package main\n\nfunc main() {}\n",
		"go.mod":    "module example.com/corpus\n\ngo 1.22\n",
		"go.sum":    "",
		"README.md": "# corpus\n",
		"notes.txt": "a\nb\nstart\nx\nend\n3\n",
		"data.csv":  "a,b\n1,2\n",
		"src/a.go":  "package main\n",
		"sub/b.txt": "b\n",
	}
	for rel, body := range tmpl {
		writeFile(t, filepath.Join(proj, rel), body)
	}
	writeFile(t, filepath.Join(home, ".ssh/id_rsa"), "secret\n")
	writeFile(t, filepath.Join(proj, ".agents/permissions"), "allow write src/**\ndeny write go.sum\n")
	if err := os.Symlink("../main.go", filepath.Join(proj, "src/tomain.go")); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(proj, "init", "-q")
	git(proj, "add", "main.go", "go.mod", "README.md", "notes.txt")
	git(proj, "commit", "-q", "-m", "start")
	os.MkdirAll(filepath.Join(proj, "nested"), 0o755)
	git(filepath.Join(proj, "nested"), "init", "-q")
	pol, err = walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	// Made after the session started: not protected.
	os.MkdirAll(filepath.Join(proj, "late"), 0o755)
	git(filepath.Join(proj, "late"), "init", "-q")
	return pol, proj
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every entry of the tree: type, mode, content or link target.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = fmt.Sprintf("dir %v", info.Mode())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %v %s", info.Mode(), hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnap(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	return d
}

// TestCorpus decides every corpus case and checks the verdict and the
// deciding rule; then it runs the command in the real bwrap sandbox, as
// the bash tool does (and under bash too, whose evaluation contexts are
// the stricter case), and checks that an allowed command left the project
// as it was — but for paths the project's write rules allow, and test
// runners, which are allowed by design.
func TestCorpus(t *testing.T) {
	testenv.Slow(t)
	cases := readCorpus(t)
	if len(cases) < 150 {
		t.Fatalf("corpus has %d cases, want at least 150", len(cases))
	}
	sources := map[string]int{}
	for _, c := range cases {
		sources[c.source]++
	}
	if len(sources) < 4 {
		t.Fatalf("corpus cites %d sources, want the two peers' and harness's", len(sources))
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bwrap is not installed (apt-get install bubblewrap): the corpus must run in the real sandbox")
	}
	// The cases run in shards side by side, each with projects, sandboxes
	// and gates of its own: most of a case's time is the sandbox starting
	// and the command running (go vet and go test compile until they are
	// killed), not this process. Cases are dealt round-robin so the slow
	// ones spread.
	// The shards are goroutines, not t.Parallel subtests: -test.parallel
	// (GOMAXPROCS) would let only two run at once, and they are waiting,
	// not computing.
	n := corpusShards()
	var wg sync.WaitGroup
	for i := range n {
		var shard []corpusCase
		for j := i; j < len(cases); j += n {
			shard = append(shard, cases[j])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(fmt.Sprintf("shard%d", i), func(t *testing.T) { runCorpusShard(t, shard) })
		}()
	}
	wg.Wait()
}

// corpusShards is how many shards of the corpus run at once:
// HARNESS_CORPUS_SHARDS, else four per CPU (the shards mostly wait on
// the sandbox's processes), at most 8.
func corpusShards() int {
	if n, err := strconv.Atoi(os.Getenv("HARNESS_CORPUS_SHARDS")); err == nil && n > 0 {
		return n
	}
	return min(4*runtime.GOMAXPROCS(0), 8)
}

// runCorpusShard runs cases in order in the real sandbox.
func runCorpusShard(t *testing.T, cases []corpusCase) {
	ctx := context.Background()
	// A project (with its policy, sandbox and gate) serves until a command
	// changes it; then the next case gets a fresh one. .git is in the
	// comparison: commits work inside the sandbox (its data directories
	// are writable), so an allowed command must not touch them either.
	var (
		proj string
		sb   sandbox.Sandbox
		g    *Gate
		want map[string]string
	)
	// fresh fails t, the test that needs the new project: a subtest's
	// failure must not call FailNow on the parent from the subtest's
	// goroutine (that panics the whole run). When it fails, sb stays nil
	// and the next case tries again.
	parent := t
	fresh := func(t *testing.T) {
		t.Helper()
		if sb != nil {
			sb.Close()
			sb = nil
		}
		var pol *walls.Policy
		pol, proj = corpusProjectFor(t, parent)
		s, err := sandbox.Open(ctx, walls.NewLive(pol), sandbox.BackendBwrap)
		if err != nil {
			t.Fatal(err)
		}
		if g, err = New(Options{Policy: pol, ProjectFile: filepath.Join(proj, ".agents/permissions")}); err != nil {
			s.Close()
			t.Fatal(err)
		}
		sb, want = s, snapshot(t, proj)
	}
	fresh(t)
	defer func() {
		if sb != nil {
			sb.Close()
		}
	}()
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d", c.line), func(t *testing.T) {
			if sb == nil {
				fresh(t)
			}
			d := g.Decide(Request{Tool: "bash", Command: c.cmd})
			if d.Verdict != c.verdict || !ruleIs(d.Rule, c.rule) {
				t.Errorf("corpus.txt:%d %q = %s %q, want %s %q", c.line, c.cmd, d.Verdict, d.Rule, c.verdict, c.rule)
			}
			// 5 s each: go vet and go test compile from a cold cache and are
			// killed; what they did until then is still checked. A command
			// that fails under sh (dash) runs again under bash, whose
			// syntax it may need.
			for _, script := range []string{c.cmd, "exec bash -c " + shellquote.Quote(c.cmd)} {
				r, err := sb.Run(ctx, sandbox.Cmd{Script: script, Timeout: 5 * time.Second})
				if err != nil {
					t.Fatalf("corpus.txt:%d: sandbox: %v", c.line, err)
				}

				changed := slices.DeleteFunc(diffSnap(want, snapshot(t, proj)), func(ch string) bool {
					// git refreshes the stat cache in its index on read-only
					// commands (an optional lock): a cache of the work tree,
					// no change to what is committed or checked out.
					return ch == "changed .git/index"
				})
				if d.Verdict == Allow && !c.runner {
					// Allowed means read-only, but for what the project's
					// write rules grant (allow write src/**).
					for _, ch := range changed {
						rel := ch[strings.IndexByte(ch, ' ')+1:]
						if wd := g.Decide(Request{Tool: "write_file", Path: rel, Write: true}); wd.Verdict != Allow {
							t.Errorf("corpus.txt:%d %q was allowed (%s) but %s, which no write rule allows (%s %s)\n%s", c.line, c.cmd, d.Rule, ch, wd.Verdict, wd.Rule, r.Output)
						}
					}
				}
				if len(changed) > 0 {
					fresh(t)
				}
				// A command killed at the timeout ran: its syntax is
				// not in question, so bash would only run it again.
				if r.ExitCode == 0 || r.TimedOut {
					break
				}
			}
		})
	}
}
