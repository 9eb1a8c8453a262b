package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Every spelling of an output option is the same option: bundles,
// attached values, --opt=value, --opt value and the prefixes getopt_long
// accepts.
func TestOptionSpellings(t *testing.T) {
	g := testGate(t, nil)
	const ruleMain = "default: ask (no write rule covers main.go)"
	for _, cmd := range []string{
		"sort -o main.go in", "sort -omain.go in", "sort -ro main.go in", "sort -rnomain.go in",
		"sort --output=main.go in", "sort --output main.go in", "sort --outp main.go in", "sort --o=main.go in",
		"tree -o main.go", "tree -ao main.go", "tree -dao main.go", "/usr/bin/time -o main.go ls",
		"command time -o main.go ls", "/usr/bin/time --out=main.go ls", "/usr/bin/time -ao main.go ls",
		"tee main.go", "tee -a main.go", "tee -ai -- main.go", "uniq in main.go", "uniq -c in main.go",
		"base64 -o main.go in", "base64 --outp=main.go in", "git diff --output=main.go", "git log --out main.go",
		"git show --outpu=main.go", "find . -fprint main.go", "find . -fprintf main.go %p", "find . -fls main.go",
		"dd if=in of=main.go", "sed -i s/a/b/ main.go", "sed --in-place s/a/b/ main.go", "sed -n 'w main.go' in",
		"sed 's/a/b/w main.go' in", "sed -e p -e 'W main.go' in", "echo > main.go", "echo >> main.go",
		"echo >| main.go", "echo &> main.go", "echo &>> main.go", "echo 2> main.go", "echo 1<> main.go",
		"exec 4> main.go", "> main.go", "cat <<E > main.go\nx\nE", "{ echo; } > main.go", "echo x | tee -p main.go",
		"cd sub && echo x > ../main.go", "echo x > ./main.go", "echo x > sub/../main.go",
	} {
		d := g.Decide(Request{Tool: "bash", Command: cmd})
		if d.Verdict != Ask || !hasPart(d, ruleMain) {
			t.Errorf("%q = %s %q, want a part %q", cmd, d.Verdict, d.Rule, ruleMain)
		}
	}
	// Options that only look like output options, and free targets.
	for _, cmd := range []string{
		"sort -k2 -t, in", "sort -rn in", "tree -L 2", "tree --charset=ascii", "tree -o /dev/null",
		"sort -o /dev/stdout in", "tee /dev/stderr < in", "ls > /tmp/x", "ls 2>&1", "ls >&2", "ls 2>&-",
		"git diff --text", "git diff --no-ext-diff", "sed -n 1,5p in", "sed --sandbox 'w x' in",
		"uniq in", "base64 -w0 in", "rg --search-zip x", "rg -z x", "rg --pre-glob '*.gz' x",
	} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != Allow {
			t.Errorf("%q = %s %q, want allow", cmd, d.Verdict, d.Rule)
		}
	}
}

func hasPart(d Decision, rule string) bool {
	for _, p := range d.Parts {
		if p.Rule == rule {
			return true
		}
	}
	return false
}

// Write rules decide shell writes as they decide write_file; a link
// cannot borrow a grant, and a deny on the link's own name holds.
func TestShellWritesFollowWriteRules(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "proj")
	for _, d := range []string{project + "/src", project + "/gen", dir + "/home"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(project+"/main.go", nil, 0o644)
	os.Symlink("../main.go", project+"/src/tomain.go")
	os.Symlink("../src/ok.go", project+"/gen/link.go")
	g := mustNew(t, Options{Policy: testPolicy(t, project, filepath.Join(dir, "home")),
		Allow: []string{"write src/**"}, Deny: []string{"write gen/**"}})
	tests := []struct {
		cmd  string
		want Verdict
	}{
		{"echo x > src/a.go", Allow},
		{"> src/a.go", Allow},
		{"sort -o src/s.txt in", Allow},
		{"echo x > src/tomain.go", Ask}, // the link leads to main.go, which no rule allows
		{"echo x > gen/link.go", Deny},  // denied by name, whatever it points to
		{"echo x > gen/a.go", Deny},
		{"echo x > main.go", Ask},
	}
	for _, tt := range tests {
		if d := g.Decide(Request{Tool: "bash", Command: tt.cmd}); d.Verdict != tt.want {
			t.Errorf("%q = %s %q, want %s", tt.cmd, d.Verdict, d.Rule, tt.want)
		}
	}
	// The same for the file tools.
	if d := g.Decide(Request{Tool: "write_file", Path: "src/tomain.go", Write: true}); d.Verdict != Ask {
		t.Errorf("write_file src/tomain.go = %s %q, want ask", d.Verdict, d.Rule)
	}
	if d := g.Decide(Request{Tool: "write_file", Path: "gen/link.go", Write: true}); d.Verdict != Deny {
		t.Errorf("write_file gen/link.go = %s %q, want deny", d.Verdict, d.Rule)
	}
}

// A symlink in the private /tmp may have been pointed into the project by
// an earlier command: writing through it asks.
func TestPrivateTmpSymlink(t *testing.T) {
	tmp := t.TempDir()
	pol := walls.NewLive(testPolicy(t, proj, home, extra))
	pol.SetTempDir(tmp) // as sandbox.Open does
	g := mustNew(t, Options{Policy: pol})
	if err := os.Symlink(proj+"/main.go", tmp+"/link"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(tmp+"/d", 0o755)
	for cmd, want := range map[string]Verdict{
		"ls > /tmp/link":           Ask,
		"ls > /tmp/link/x":         Ask,
		"ls > /tmp/d/x":            Allow,
		"ls > /tmp/new":            Allow,
		"echo x > /dev/null":       Allow,
		"echo x > /dev/fd/1":       Deny,
		"echo x > /proc/self/fd/1": Deny,
	} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != want {
			t.Errorf("%q = %s %q, want %s", cmd, d.Verdict, d.Rule, want)
		}
	}
	// Without a sandbox there is no private /tmp.
	g = mustNew(t, Options{Policy: pol, Unsandboxed: true})
	if d := g.Decide(Request{Tool: "bash", Command: "ls > /tmp/new"}); d.Verdict != Deny {
		t.Errorf("unsandboxed ls > /tmp/new = %s %q, want deny", d.Verdict, d.Rule)
	}
}

func TestScanSed(t *testing.T) {
	tests := []struct {
		script string
		writes []string
		runs   bool
		bad    bool
	}{
		{"1,5p", nil, false, false},
		{"$p", nil, false, false},
		{"/a/,/b/{s/x/y/g;p}", nil, false, false},
		{`s/a\/b/c/`, nil, false, false},
		{"s|a|b|w out", []string{"out"}, false, false},
		{"s/a/b/gw out.txt", []string{"out.txt"}, false, false},
		{"w out", []string{"out"}, false, false},
		{"1W  two words", []string{"two words"}, false, false},
		{"e", nil, true, false},
		{"1e touch x", nil, true, false},
		{"s/a/touch x/e", nil, true, false},
		{"s/a/b/ge", nil, true, false},
		{"a text with w and e\np", nil, false, false},
		{"y/abc/xyz/;p", nil, false, false},
		{`\%x%p`, nil, false, false},
		{":a;N;ba", nil, false, false},
		{"s/a/b", nil, false, true},
		{"1~2p;0~3d", nil, false, false},
		{"k", nil, false, true},
		{"p # comment w x\nw y", []string{"y"}, false, false},
		{"/x/I,+2!d", nil, false, false},
	}
	for _, tt := range tests {
		e := scanSed(tt.script)
		if (e.bad != "") != tt.bad || e.runs != tt.runs || len(e.writes) != len(tt.writes) {
			t.Errorf("scanSed(%q) = %+v, want writes %q runs %v bad %v", tt.script, e, tt.writes, tt.runs, tt.bad)
			continue
		}
		for i := range tt.writes {
			if e.writes[i] != tt.writes[i] {
				t.Errorf("scanSed(%q) writes %q, want %q", tt.script, e.writes, tt.writes)
			}
		}
	}
}

// Pagers a user allowed still ask for the options that run or write.
func TestPagerOptions(t *testing.T) {
	g := testGate(t, func(o *Options) { o.Allow = []string{"bash less *", "bash man *"} })
	for cmd, want := range map[string]Verdict{
		"less README":               Allow,
		"man ls":                    Allow,
		"man -P 'sh -c x' ls":       Ask,
		"man --pager=cat ls":        Ask,
		"man --pag=cat ls":          Ask,
		"man -Hfirefox ls":          Ask,
		"less '+!touch x' README":   Ask,
		"less -o main.go README":    Ask,
		"less --log-file=/etc/x R":  Deny,
		"less -k keys README":       Ask,
		"LESSOPEN='|x %s' less R":   Ask,
		"MANPAGER='sh -c x' man ls": Ask,
	} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != want {
			t.Errorf("%q = %s %q, want %s", cmd, d.Verdict, d.Rule, want)
		}
	}
}
