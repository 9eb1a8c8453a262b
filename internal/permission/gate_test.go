package permission

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuleFiles(t *testing.T) {
	g := testGate(t, func(o *Options) {
		o.UserFile = "testdata/user.rules"
		o.ProjectFile = "testdata/project.rules"
	})
	tests := []struct {
		req  Request
		want Verdict
		rule string
	}{
		// The project file cannot loosen the user's deny, however specific.
		{Request{Tool: "bash", Command: "docker ps"}, Deny, "deny bash docker *"},
		{Request{Tool: "bash", Command: "docker run hello-world"}, Deny, "deny bash docker *"},
		{Request{Tool: "read_file", Path: home + "/private/notes.txt"}, Deny, "deny read ~/private/**"},
		{Request{Tool: "write_file", Path: "src/generated/ok.go", Write: true}, Deny, "deny write src/generated/**"},
		// Nor a built-in deny.
		{Request{Tool: "bash", Command: "sudo ls"}, Deny, "deny bash sudo *"},
		// It can tighten.
		{Request{Tool: "bash", Command: "make build"}, Deny, "deny bash make build"},
		// And allow what only asked.
		{Request{Tool: "bash", Command: "python3 tools/gen.py"}, Allow, "allow bash python3 tools/gen.py"},
		{Request{Tool: "bash", Command: "python3 tools/gen.py --force"}, Ask, ruleDefault},
		// User rules: the most specific wins.
		{Request{Tool: "bash", Command: "go test ./slow/..."}, Ask, "ask bash go test ./slow/..."},
		{Request{Tool: "bash", Command: "go test ./fast/..."}, Allow, "allow bash go test *"},
		{Request{Tool: "write_file", Path: "src/a.go", Write: true}, Allow, "allow write src/**"},
		{Request{Tool: "write_file", Path: "docs/a.md", Write: true}, Ask, ruleDefault},
		{Request{Tool: "read_file", Path: home + "/notes.txt"}, Allow, "allow read /**"},
	}
	for _, tt := range tests {
		t.Run(tt.req.Command+tt.req.Path, func(t *testing.T) {
			d := g.Decide(tt.req)
			if d.Verdict != tt.want || d.Rule != tt.rule {
				t.Errorf("Decide(%+v) = %s %q, want %s %q", tt.req, d.Verdict, d.Rule, tt.want, tt.rule)
			}
		})
	}
	rules := strings.Join(g.Rules(), "\n")
	for _, want := range []string{"deny bash docker *  (testdata/user.rules:2)", "allow bash docker *  (testdata/project.rules:3)", "deny bash curl *  (default)"} {
		if !strings.Contains(rules, want) {
			t.Errorf("Rules() lacks %q", want)
		}
	}
}

func TestRuleFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"verdict": "allow bash ls *\n\npermit bash rm\n",
		"tool":    "allow bash ls *\n# c\n\nallow\n",
		"pattern": "allow bash ls *\n\ndeny bash\n",
		"quote":   "allow bash ls *\n\nallow bash echo 'x\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name)
			if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New(Options{Policy: testPol, ProjectFile: f})
			if err == nil || !strings.Contains(err.Error(), f+":") {
				t.Fatalf("New: error %v, want one naming %s and the line", err, f)
			}
			line := ":3:"
			if name == "tool" {
				line = ":4:"
			}
			if !strings.Contains(err.Error(), line) {
				t.Errorf("error %q does not name line %s", err, line)
			}
		})
	}
	if _, err := New(Options{Policy: testPol, UserFile: "testdata/bad.rules"}); err == nil || !strings.Contains(err.Error(), "testdata/bad.rules:3") {
		t.Errorf("bad.rules: %v", err)
	}
	if _, err := New(Options{Policy: testPol, UserFile: filepath.Join(dir, "missing")}); err != nil {
		t.Errorf("a missing file must be fine: %v", err)
	}
	if _, err := New(Options{Policy: testPol, Allow: []string{"bash 'x"}}); err == nil || !strings.Contains(err.Error(), "--allow") {
		t.Errorf("bad --allow: %v", err)
	}
}

// fakePrompter answers from a script and remembers what it was shown.
type fakePrompter struct {
	answers  []Answer
	err      error
	patterns []string
	calls    int
}

func (f *fakePrompter) Prompt(ctx context.Context, req Request, d Decision, pattern string) (Answer, error) {
	f.calls++
	f.patterns = append(f.patterns, pattern)
	if f.err != nil {
		return Answer{}, f.err
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func TestAlwaysPersists(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, ".agents", "permissions")
	fp := &fakePrompter{answers: []Answer{{Choice: Always}, {Choice: Always}}}
	var recs []Record
	opts := Options{Policy: testPolicy(t, dir, home), ProjectFile: pf, Prompter: fp, Record: func(r Record) { recs = append(recs, r) }}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cmd := "go generate ./... && npm run build"
	if ok, msg := g.Check(ctx, Request{Tool: "bash", Command: cmd}); !ok {
		t.Fatalf("Check: refused: %s", msg)
	}
	if want := "go generate *; npm run build"; fp.patterns[0] != want {
		t.Errorf("pattern = %q, want %q", fp.patterns[0], want)
	}
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"allow bash go generate *\n", "allow bash npm run build\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("project file lacks %q:\n%s", want, data)
		}
	}
	// The next decision allows without prompting, in this gate and in a
	// fresh one that reads the file.
	for i, g := range []*Gate{g, mustNew(t, opts)} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != Allow || d.Rule != "allow bash go generate *" {
			t.Errorf("gate %d: after always: %s %q", i, d.Verdict, d.Rule)
		}
		// Useful: the same subcommand with other arguments is covered...
		if d := g.Decide(Request{Tool: "bash", Command: "go generate ./x"}); d.Verdict != Allow {
			t.Errorf("gate %d: always did not cover the same subcommand: %s %q", i, d.Verdict, d.Rule)
		}
		// ...narrow: another subcommand, or another script, still asks.
		for _, other := range []string{"go build ./x", "npm run deploy"} {
			if d := g.Decide(Request{Tool: "bash", Command: other}); d.Verdict != Ask {
				t.Errorf("gate %d: always widened to %q: %s %q", i, other, d.Verdict, d.Rule)
			}
		}
	}
	if fp.calls != 1 {
		t.Errorf("prompted %d times, want 1", fp.calls)
	}
	if ok, _ := g.Check(ctx, Request{Tool: "bash", Command: cmd}); !ok || fp.calls != 1 {
		t.Errorf("second Check: ok=%v prompts=%d", ok, fp.calls)
	}
	// Files: the exact path, relative to the project.
	if ok, _ := g.Check(ctx, Request{Tool: "write_file", Path: filepath.Join(dir, "a b*.txt"), Write: true}); !ok {
		t.Fatal("write refused")
	}
	if fp.patterns[1] != `a b\*.txt` {
		t.Errorf("file pattern = %q", fp.patterns[1])
	}
	if d := g.Decide(Request{Tool: "edit_file", Path: "a b*.txt", Write: true}); d.Verdict != Allow {
		t.Errorf("after always on a file: %s %q", d.Verdict, d.Rule)
	}
	if d := g.Decide(Request{Tool: "edit_file", Path: "a bX.txt", Write: true}); d.Verdict != Ask {
		t.Errorf("an escaped * matched another name: %s %q", d.Verdict, d.Rule)
	}
	if d := g.Decide(Request{Tool: "write_file", Write: true}); d.Verdict != Deny {
		t.Errorf("write without a path: %s", d.Verdict)
	}
	zero := mustNew(t, Options{Policy: testPol, Prompter: &fakePrompter{answers: []Answer{{}}}})
	if ok, _ := zero.Check(context.Background(), Request{Tool: "bash", Command: "python3 x"}); ok {
		t.Error("a zero Answer allowed the call")
	}
	if len(recs) != 3 || recs[0].Answer != "always go generate *; npm run build" || recs[1].Answer != "allow" || recs[0].Rule != ruleDefault {
		t.Errorf("records = %+v", recs)
	}
}

func mustNew(t *testing.T, o Options) *Gate {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAlwaysNotOfferedForComputedCommands(t *testing.T) {
	for _, cmd := range []string{"$X run", "ls 'x", "python3 $(cat f)", "eval \"$C\""} {
		fp := &fakePrompter{answers: []Answer{{Choice: Always}}}
		dir := t.TempDir()
		g := mustNew(t, Options{Policy: testPolicy(t, dir, home), ProjectFile: filepath.Join(dir, ".agents/permissions"), Prompter: fp})
		if ok, _ := g.Check(context.Background(), Request{Tool: "bash", Command: cmd}); !ok {
			t.Errorf("%q: always should still allow once", cmd)
		}
		if fp.patterns[0] != "" {
			t.Errorf("%q: always offered with pattern %q", cmd, fp.patterns[0])
		}
		if _, err := os.Stat(filepath.Join(dir, ".agents/permissions")); err == nil {
			t.Errorf("%q: a rule was written", cmd)
		}
	}
}

func TestPromptAnswers(t *testing.T) {
	ctx := context.Background()
	req := Request{Tool: "bash", Command: "python3 x.py"}
	for _, tt := range []struct {
		name    string
		fp      *fakePrompter
		ok      bool
		msg     string
		answer  string
		noState bool
	}{
		{"yes", &fakePrompter{answers: []Answer{{Choice: Yes}}}, true, "", "yes", true},
		{"no", &fakePrompter{answers: []Answer{{Choice: No}}}, false, "The user refused this command. Do not retry it", "no", true},
		{"reason", &fakePrompter{answers: []Answer{{Choice: No, Reason: "use the venv python"}}}, false, "The user refused this command: use the venv python", "no use the venv python", true},
		{"error", &fakePrompter{err: errors.New("tty gone")}, false, "the permission prompt failed (tty gone)", "deny (prompt failed)", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec Record
			g := mustNew(t, Options{Policy: testPol, Prompter: tt.fp, Record: func(r Record) { rec = r }})
			ok, msg := g.Check(ctx, req)
			if ok != tt.ok || !strings.Contains(msg, tt.msg) {
				t.Errorf("Check = %v %q, want %v containing %q", ok, msg, tt.ok, tt.msg)
			}
			if rec.Answer != tt.answer || rec.Command != req.Command || rec.Tool != "bash" || rec.Rule != ruleDefault {
				t.Errorf("record = %+v", rec)
			}
			// Yes and no hold for this call only.
			if d := g.Decide(req); d.Verdict != Ask {
				t.Errorf("answer %s changed the rules: %s", tt.name, d.Verdict)
			}
		})
	}
}

func TestHeadless(t *testing.T) {
	var recs []Record
	g := testGate(t, func(o *Options) { o.Record = func(r Record) { recs = append(recs, r) } })
	ok, msg := g.Check(context.Background(), Request{Tool: "bash", Command: "python3 x.py"})
	if ok {
		t.Fatal("headless ask was allowed")
	}
	for _, want := range []string{"non-interactive mode", "not allowed", "--allow 'bash python3 x.py'", "--yolo", "default: ask"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	ok, msg = g.Check(context.Background(), Request{Tool: "bash", Command: "$X"})
	if ok || !strings.Contains(msg, "re-run with --yolo") {
		t.Errorf("computed command: %v %q", ok, msg)
	}
	ok, msg = g.Check(context.Background(), Request{Tool: "bash", Command: "curl x"})
	if ok || !strings.Contains(msg, `"deny bash curl *"`) {
		t.Errorf("denied command: %v %q", ok, msg)
	}
	if ok, _ := g.Check(context.Background(), Request{Tool: "bash", Command: "ls"}); !ok {
		t.Error("ls refused")
	}
	want := []string{"deny (non-interactive)", "deny (non-interactive)", "deny", "allow"}
	for i, r := range recs {
		if r.Answer != want[i] {
			t.Errorf("record %d = %+v, want answer %q", i, r, want[i])
		}
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Options)
		cmd  string
		want Verdict
		rule string
	}{
		{"allow", func(o *Options) { o.Allow = []string{"bash python3 x.py"} }, "python3 x.py", Allow, "allow bash python3 x.py"},
		{"allow bare", func(o *Options) { o.Allow = []string{"npm run *"} }, "npm run build", Allow, "allow bash npm run *"},
		{"allow narrow", func(o *Options) { o.Allow = []string{"bash python3 x.py"} }, "python3 y.py", Ask, ruleDefault},
		{"allow overrides default deny", func(o *Options) { o.Allow = []string{"bash curl http://localhost:*"} }, "curl http://localhost:8080", Allow, "allow bash curl http://localhost:*"},
		{"allow cannot pass the walls", func(o *Options) { o.Allow = []string{"bash *"} }, "echo x > /etc/x", Deny, ruleOutside},
		{"allow all but deny stays", func(o *Options) { o.Allow = []string{"bash *"} }, "curl x", Deny, ruleCurl},
		{"deny", func(o *Options) { o.Deny = []string{"bash go test *"} }, "go test ./...", Deny, "deny bash go test *"},
		{"deny wins a tie", func(o *Options) { o.Deny = []string{"bash ls *"} }, "ls", Deny, "deny bash ls *"},
		{"yolo", func(o *Options) { o.Yolo = true }, "python3 x.py", Allow, "yolo (was: default: ask)"},
		{"yolo computed", func(o *Options) { o.Yolo = true }, "$X", Allow, "yolo (was: " + ruleDyn + ")"},
		{"yolo keeps deny", func(o *Options) { o.Yolo = true }, "curl x", Deny, ruleCurl},
		{"yolo keeps walls", func(o *Options) { o.Yolo = true }, "echo x >> ~/.bashrc", Deny, ruleOutside},
		{"yolo and --deny", func(o *Options) { o.Yolo = true; o.Deny = []string{"bash python3 *"} }, "python3 x.py", Deny, "deny bash python3 *"},
		{"unsandboxed asks", func(o *Options) { o.Unsandboxed = true }, "ls", Ask, "ask: no sandbox…"},
		{"unsandboxed with allow", func(o *Options) { o.Unsandboxed = true; o.Allow = []string{"ls *"} }, "ls", Ask, "ask: no sandbox…"},
		{"unsandboxed deny", func(o *Options) { o.Unsandboxed = true }, "curl x", Deny, ruleCurl},
		{"unsandboxed yolo", func(o *Options) { o.Unsandboxed = true; o.Yolo = true }, "ls", Allow, "yolo…"},
		{"unsandboxed no /tmp", func(o *Options) { o.Unsandboxed = true }, "ls > /tmp/x", Deny, ruleOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := testGate(t, tt.mod)
			d := g.Decide(Request{Tool: "bash", Command: tt.cmd})
			if d.Verdict != tt.want || !ruleIs(d.Rule, tt.rule) {
				t.Errorf("Decide(%q) = %s %q, want %s %q", tt.cmd, d.Verdict, d.Rule, tt.want, tt.rule)
			}
		})
	}
}

func TestFileTools(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "proj")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{project, outside, filepath.Join(dir, "home/.ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the project that leads out of it, and one to a secret.
	if err := os.Symlink(outside, filepath.Join(project, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "home/.ssh"), filepath.Join(project, "keys")); err != nil {
		t.Fatal(err)
	}
	fp := &fakePrompter{answers: []Answer{{Choice: Always}, {Choice: Yes}}}
	opts := Options{
		Policy:      testPolicy(t, project, filepath.Join(dir, "home")),
		ProjectFile: filepath.Join(project, ".agents/permissions"),
		Allow:       []string{"write " + outside + "/**"},
		Yolo:        true,
		Prompter:    fp,
	}
	g := mustNew(t, opts)
	tests := []struct {
		req  Request
		want Verdict
		rule string
	}{
		{Request{Tool: "read_file", Path: "main.go"}, Allow, "allow read /**"},
		{Request{Tool: "read_file", Path: "/etc/hosts"}, Allow, "allow read /**"},
		{Request{Tool: "read_file", Path: "~/.ssh/id_rsa"}, Deny, "sandbox: never read …"},
		{Request{Tool: "grep", Path: "keys/id_rsa"}, Deny, "sandbox: never read …"},
		{Request{Tool: "write_file", Path: "main.go", Write: true}, Allow, "yolo (was: default: ask)"},
		// Outside the writable roots: denied even with --yolo, --allow and "always".
		{Request{Tool: "write_file", Path: outside + "/x", Write: true}, Deny, ruleOutside},
		{Request{Tool: "edit_file", Path: "../outside/x", Write: true}, Deny, ruleOutside},
		{Request{Tool: "edit_file", Path: "escape/x", Write: true}, Deny, ruleOutside},
		{Request{Tool: "write_file", Path: "/etc/passwd", Write: true}, Deny, ruleOutside},
		{Request{Tool: "write_file", Path: ".agents/permissions", Write: true}, Deny, "sandbox: never write …"},
		{Request{Tool: "edit_file", Path: ".git/config", Write: true}, Deny, "sandbox: never write …"},
		{Request{Tool: "todos"}, Allow, "default: allow…"},
	}
	for _, tt := range tests {
		t.Run(tt.req.Tool+" "+tt.req.Path, func(t *testing.T) {
			d := g.Decide(tt.req)
			if d.Verdict != tt.want || !ruleIs(d.Rule, tt.rule) {
				t.Errorf("Decide(%+v) = %s %q, want %s %q", tt.req, d.Verdict, d.Rule, tt.want, tt.rule)
			}
			if d.Verdict == Deny && d.Reason == "" {
				t.Error("denial without a reason")
			}
		})
	}
	// Check never prompts for a wall, and "always" cannot widen one.
	opts.Yolo = false
	g = mustNew(t, opts)
	if ok, msg := g.Check(context.Background(), Request{Tool: "write_file", Path: outside + "/x", Write: true}); ok || !strings.Contains(msg, "--add-dir") {
		t.Errorf("write outside: %v %q", ok, msg)
	}
	if fp.calls != 0 {
		t.Errorf("prompted %d times for a wall", fp.calls)
	}
	if ok, _ := g.Check(context.Background(), Request{Tool: "write_file", Path: "main.go", Write: true}); !ok {
		t.Error("write in project refused after always")
	}
	if d := g.Decide(Request{Tool: "write_file", Path: "main.go", Write: true}); d.Verdict != Allow {
		t.Errorf("after always: %s %q", d.Verdict, d.Rule)
	}
	// --add-dir is the only way out.
	opts.Policy = testPolicy(t, project, filepath.Join(dir, "home"), outside)
	g = mustNew(t, opts)
	if d := g.Decide(Request{Tool: "write_file", Path: outside + "/x", Write: true}); d.Verdict != Allow {
		t.Errorf("with --add-dir: %s %q", d.Verdict, d.Rule)
	}
}

// "always" offers the command and its subcommand with * for the
// arguments, so the grant applies again; commands whose arguments are the
// point keep their exact words.
func TestNarrowPattern(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"mytool check ./...", "mytool check *"},
		{"mytool check -run TestX ./pkg", "mytool check *"},
		{"gofmt -w main.go", "gofmt -w *"},
		{"gofmt -l -w internal/ui", "gofmt -l -w *"},
		{"npm run build", "npm run build"},
		{"npm run lint -- --fix", "npm run lint *"},
		{"npm install lodash", "npm install *"},
		{"yarn add react", "yarn add *"},
		{"make", "make"},
		{"make -C sub all", "make -C *"},
		{"cargo build --release", "cargo build *"},
		{"cargo run --bin x -- --flag", "cargo run *"},
		{"go build -o bin/x ./cmd/x", "write bin/x; go build *"},
		{"go mod tidy", "go mod tidy"},
		{"go get example.com/x@v1", "go get *"},
		{"docker build -t x .", "docker build *"},
		{"docker compose up -d", "docker compose up *"},
		{"git add -A", "git add *"},
		{"git checkout -b feature/x", "git checkout *"},
		{"git commit -m 'a msg'", "git commit *"},
		{"git stash pop", "git stash pop"},
		{"pip install -r requirements.txt", "pip install *"},
		{"npx prettier --write src/a.ts", "npx prettier --write *"},
		{"bundle exec rspec spec/a_spec.rb", "bundle exec rspec *"},
		{"uv run pytest", "uv run pytest"},
		{"eslint --fix src", "eslint --fix *"},
		{"tsc --noEmit", "tsc --noEmit"},
		{"staticcheck ./...", "staticcheck *"},
		{"./scripts/build.sh --fast", "./scripts/build.sh --fast"},
		{"./scripts/build.sh --fast out/x", "./scripts/build.sh --fast *"},
		{"touch made-here", "touch made-here"},
		{"touch a/b.txt", "touch *"},
		{"rm -rf build", "rm -rf build"},
		{"python3 x.py", "python3 x.py"},
	}
	for _, tt := range tests {
		g := mustNew(t, Options{Policy: testPolicy(t, t.TempDir(), home)})
		d := g.Decide(Request{Tool: "bash", Command: tt.cmd})
		if d.Verdict != Ask {
			t.Errorf("%q: %s %q, want ask", tt.cmd, d.Verdict, d.Rule)
			continue
		}
		if got := d.Pattern(); got != tt.want {
			t.Errorf("%q: pattern %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// "Yes for this session" allows the pattern until harness exits and saves
// nothing.
func TestSessionGrant(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, ".agents", "permissions")
	fp := &fakePrompter{answers: []Answer{{Choice: Session}}}
	opts := Options{Policy: testPolicy(t, dir, home), ProjectFile: pf, Prompter: fp}
	g := mustNew(t, opts)
	if ok, msg := g.Check(context.Background(), Request{Tool: "bash", Command: "mytool check ./..."}); !ok {
		t.Fatalf("refused: %s", msg)
	}
	if d := g.Decide(Request{Tool: "bash", Command: "mytool check ./pkg"}); d.Verdict != Allow || !strings.Contains(d.Rule, "mytool check *") {
		t.Errorf("after a session grant: %s %q", d.Verdict, d.Rule)
	}
	if _, err := os.Stat(pf); !os.IsNotExist(err) {
		t.Errorf("a session grant wrote the project file: %v", err)
	}
	if d := mustNew(t, opts).Decide(Request{Tool: "bash", Command: "mytool check ./pkg"}); d.Verdict != Ask {
		t.Errorf("a session grant outlived its gate: %s %q", d.Verdict, d.Rule)
	}
}
