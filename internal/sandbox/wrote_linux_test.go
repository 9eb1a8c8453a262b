package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// wroteBackends are the backends whose commands say what they wrote: the
// launcher's supervisors of both (linux/inner/wrote_linux.go).
var wroteBackends = []string{BackendBwrap, BackendLandlock}

// wroteNobodyEnv marks the re-executed run as nobody.
const wroteNobodyEnv = "HARNESS_SANDBOX_TEST_WROTE_NOBODY"

// TestWroteEachKind: the sandbox reports exactly the paths a command
// asked to write, one of each kind of call (open for writing, rename,
// unlink, mkdir, rmdir, symlink, link, truncate, chmod), relative to the
// working directory and to a directory descriptor, and none it only read.
func TestWroteEachKind(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.Missing(t, testenv.Python3, "python3 is not installed: the calls by descriptor are made with it")
	}
	for _, backend := range wroteBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, nil)
			for _, f := range []string{"t0", "m0", "u0", "r0"} {
				if err := os.WriteFile(filepath.Join(proj, f), []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			script := `set -e
mkdir d
cd d
echo x > a
mv a c
ln -s c s
ln c h
chmod 600 c
rm h
cd ..
cat r0 > /dev/null
ls -R > /dev/null
python3 -c '
import os
fd = os.open("d", os.O_RDONLY | os.O_DIRECTORY)
os.close(os.open("o", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
os.close(os.open("c", os.O_RDONLY, dir_fd=fd))
os.truncate("t0", 0)
os.chmod("m0", 0o600)
os.mkdir("e")
os.rmdir("e")
os.unlink("u0")
'
`
			r := run(t, sb, script)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Output)
			}
			if !r.WroteKnown {
				t.Fatalf("write set unknown: %s", r.WroteWhy)
			}
			var want []string
			for _, p := range []string{"d", "d/a", "d/c", "d/s", "d/h", "d/o", "t0", "m0", "e", "u0"} {
				want = append(want, filepath.Join(proj, p))
			}
			slices.Sort(want)
			got := slices.Sorted(slices.Values(r.Wrote))
			if !slices.Equal(got, want) {
				t.Errorf("wrote\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
			}
		})
	}
	nobodyRerun(t, "TestWroteEachKind", len(wroteBackends))
}

// TestWroteDoubleFork: a process the command double-forks, orphaned and
// writing later while the command still runs, is still covered; a
// file written through a symlink to elsewhere in the project is named
// where it lands.
func TestWroteDoubleFork(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range wroteBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, nil)
			os.Mkdir(filepath.Join(proj, "real"), 0o755)
			os.Symlink("real", filepath.Join(proj, "link"))
			r := run(t, sb, `sh -c '(sleep 0.3; echo late > late.txt) &' ; echo now > link/now.txt; sleep 1`)
			if r.ExitCode != 0 || !r.WroteKnown {
				t.Fatalf("exit %d, known %v (%s): %s", r.ExitCode, r.WroteKnown, r.WroteWhy, r.Output)
			}
			for _, p := range []string{"late.txt", "real/now.txt", "link/now.txt"} {
				if !slices.Contains(r.Wrote, filepath.Join(proj, p)) {
					t.Errorf("%s missing from %v", p, r.Wrote)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(proj, "late.txt")); string(b) != "late\n" {
				t.Errorf("late.txt holds %q", b)
			}
		})
	}
	nobodyRerun(t, "TestWroteDoubleFork", len(wroteBackends))
}

// TestWroteFlood: 10,000 files created is past the bound: the set is
// unknown, saying why, and the command is none the worse for it.
func TestWroteFlood(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range wroteBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, nil)
			r := run(t, sb, `mkdir f && cd f && i=0; while [ $i -lt 10000 ]; do : > $i; i=$((i+1)); done; ls | wc -l`)
			if r.ExitCode != 0 || strings.TrimSpace(string(r.Output)) != "10000" {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Output)
			}
			if r.WroteKnown || !strings.Contains(r.WroteWhy, "more than 4096 paths") || len(r.Wrote) != 0 {
				t.Errorf("known %v, why %q, %d paths", r.WroteKnown, r.WroteWhy, len(r.Wrote))
			}
			// The next command's set is its own again.
			r = run(t, sb, `echo x > after.txt`)
			if !r.WroteKnown || !slices.Equal(r.Wrote, []string{filepath.Join(proj, "after.txt")}) {
				t.Errorf("after the flood: known %v (%s), %v", r.WroteKnown, r.WroteWhy, r.Wrote)
			}
		})
	}
}

// TestWroteUnknownPerCommand: a sandbox of its own does not say what its
// command wrote, and says so.
func TestWroteUnknownPerCommand(t *testing.T) {
	sb, _ := openTest(t, BackendBwrap+perCommand, nil)
	r := run(t, sb, `echo x > a`)
	if r.WroteKnown || r.WroteWhy == "" {
		t.Errorf("known %v, why %q", r.WroteKnown, r.WroteWhy)
	}
}

// nobodyRerun runs test again as nobody, expecting n subtests to pass.
func nobodyRerun(t *testing.T, test string, n int) {
	t.Helper()
	if os.Getuid() != 0 || os.Getenv(wroteNobodyEnv) != "" || t.Failed() {
		return
	}
	setpriv, bin := testenv.NobodyBinary(t, outsideBase(), test)
	home := filepath.Join(filepath.Dir(bin), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(home, 65534, 65534)
	cmd := testenv.AsNobody(setpriv, bin, []string{"-test.run=^" + test + "$", "-test.count=1", "-test.v"}, wroteNobodyEnv+"=1", "HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS: "+test+"/") != n {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// TestWriteJournalUnreachable: the write journal is the one host file a
// process inside the walls writes (the supervisor, through a descriptor
// harness opened). A command that walks every /proc/<pid>/fd it can see
// and writes to each link, and reopens each for appending, must not
// reach it: the journal holds the command's own paths, one JSON string
// a line, and nothing planted. The command does see its own descriptors,
// so the walk itself is shown to work.
func TestWriteJournalUnreachable(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range wroteBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, nil)
			jpath := filepath.Join(filepath.Dir(proj), "call.writes")
			j, err := os.OpenFile(jpath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			script := `echo mine > mine.txt
sleep 5 > held.txt &
sleep 0.2
seen=0
for f in /proc/[0-9]*/fd/*; do
  case "$f" in /proc/$$/*|/proc/self/*) continue;; esac
  seen=$((seen+1))
  printf '%s -> %s\n' "$f" "$(readlink "$f" 2>/dev/null)"
  echo PLANTED >> "$f" 2>/dev/null
  echo PLANTED 1<> "$f" 2>/dev/null
done
for p in /proc/[0-9]*; do ls "$p/fd" >/dev/null 2>&1 && echo "listed $p"; done
echo "seen $seen"
kill %1 2>/dev/null; true`
			r, err := sb.Run(t.Context(), Cmd{Script: script, WriteJournal: j})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("command output:\n%s", r.Output)
			if held, _ := os.ReadFile(filepath.Join(proj, "held.txt")); !strings.Contains(string(held), "PLANTED") {
				t.Fatalf("the walk did not write into its own process's held.txt (%q): it tests nothing\n%s", held, r.Output)
			}
			b, err := os.ReadFile(jpath)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "PLANTED") {
				t.Errorf("the command wrote into the write journal:\n%s", b)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			mine := false
			for _, l := range lines {
				if !strings.HasPrefix(l, `"`) && l != "null" {
					t.Errorf("journal line %q is no JSON string", l)
				}
				mine = mine || strings.Contains(l, "mine.txt")
			}
			if !mine {
				t.Errorf("the journal lacks the command's own write (mine.txt):\n%s", b)
			}
			if strings.Contains(string(r.Output), jpath) {
				t.Errorf("the journal's descriptor is visible to the command:\n%s", r.Output)
			}
		})
	}
	nobodyRerun(t, "TestWriteJournalUnreachable", len(wroteBackends))
}
