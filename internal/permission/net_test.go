package permission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func netGate(t *testing.T, user, project string, o Options) *Gate {
	t.Helper()
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".agents"), 0o755)
	o.Project, o.Home = proj, filepath.Join(dir, "home")
	os.MkdirAll(o.Home, 0o755)
	o.Policy = testPolicy(t, proj, o.Home)
	if user != "" {
		o.UserFile = filepath.Join(dir, "user-permissions")
		os.WriteFile(o.UserFile, []byte(user), 0o644)
	}
	o.ProjectFile = filepath.Join(proj, ".agents", "permissions")
	if project != "" {
		os.WriteFile(o.ProjectFile, []byte(project), 0o644)
	}
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDecideNet(t *testing.T) {
	user := `allow net *.example.com
allow net db.internal:5432
deny net evil.example.com
allow net 10.1.2.3:8080
allow net @go
ask net *.ask.test:*
deny net blocked.test
`
	project := "allow net blocked.test\nallow net proj.test:8443\n"
	g := netGate(t, user, project, Options{AllowNet: []string{"flag.test", "@npm"}})
	for _, tc := range []struct {
		host  string
		port  int
		want  Verdict
		exact bool
	}{
		{"api.example.com", 443, Allow, false},
		{"API.Example.COM.", 80, Allow, false},
		{"a.b.example.com", 443, Allow, false},
		{"example.com", 443, Ask, false},       // *.x is below x only
		{"api.example.com", 22, Ask, false},    // no port: 80 and 443 only
		{"evil.example.com", 443, Deny, false}, // the named host beats the pattern
		{"db.internal", 5432, Allow, true},     // names host and port: exact
		{"db.internal", 5433, Ask, false},
		{"10.1.2.3", 8080, Allow, true},        // an IP literal by its own rule
		{"10.1.2.4", 443, Ask, false},          // no pattern reaches an IP literal
		{"proxy.golang.org", 443, Allow, true}, // preset entries name their port
		{"sum.golang.org", 443, Allow, true},
		{"registry.npmjs.org", 443, Allow, true}, // preset from --allow-net
		{"flag.test", 443, Allow, false},
		{"x.ask.test", 9999, Ask, false},
		{"blocked.test", 443, Deny, false}, // the project file cannot loosen a user deny
		{"proj.test", 8443, Allow, true},
		{"unknown.test", 443, Ask, false},
	} {
		d, exact := g.DecideNet(NetRequest{Host: tc.host, Port: tc.port})
		if d.Verdict != tc.want || exact != tc.exact {
			t.Errorf("%s:%d = %v exact %v (%s), want %v exact %v", tc.host, tc.port, d.Verdict, exact, d.Rule, tc.want, tc.exact)
		}
	}
	// Even * does not reach an IP literal.
	g = netGate(t, "allow net *:*\n", "", Options{})
	if d, _ := g.DecideNet(NetRequest{Host: "169.254.169.254", Port: 80}); d.Verdict != Ask {
		t.Errorf("allow net *:* reached an IP literal: %v", d.Verdict)
	}
}

func TestNetRuleErrors(t *testing.T) {
	for _, bad := range []string{"allow net @nosuch", "allow net ex*ample.com", "allow net *example.com", "allow net host:99999", "allow net a/b", "allow net"} {
		dir := t.TempDir()
		f := filepath.Join(dir, "p")
		os.WriteFile(f, []byte(bad+"\n"), 0o644)
		if _, err := New(Options{Policy: testPolicy(t, dir, ""), Project: dir, UserFile: f}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCheckNetHeadless(t *testing.T) {
	var recs []Record
	g := netGate(t, "", "", Options{Record: func(r Record) { recs = append(recs, r) }})
	v := g.CheckNet(context.Background(), NetRequest{Host: "unlisted.test", Port: 443, Command: "curl https://unlisted.test"})
	if v.Allowed || !strings.Contains(v.Reason, "--allow-net unlisted.test") {
		t.Errorf("headless: %+v", v)
	}
	if len(recs) != 1 || recs[0].Tool != "net" || !strings.Contains(recs[0].Command, "unlisted.test:443") || recs[0].Answer != "deny (non-interactive)" {
		t.Errorf("records %+v", recs)
	}
}

type fixedPrompter struct {
	ans   Answer
	asked []Request
	pats  []string
}

func (p *fixedPrompter) Prompt(_ context.Context, req Request, _ Decision, pattern string) (Answer, error) {
	p.asked = append(p.asked, req)
	p.pats = append(p.pats, pattern)
	return p.ans, nil
}

func TestCheckNetAlwaysPersists(t *testing.T) {
	pr := &fixedPrompter{ans: Answer{Choice: Always}}
	g := netGate(t, "", "", Options{Prompter: pr})
	v := g.CheckNet(context.Background(), NetRequest{Host: "New.Test", Port: 443, Command: "npm install"})
	if !v.Allowed || v.Exact {
		t.Errorf("always: %+v (an answer never grants private addresses)", v)
	}
	if len(pr.asked) != 1 || !strings.Contains(pr.asked[0].Command, "new.test:443") || !strings.Contains(pr.asked[0].Command, "npm install") || pr.pats[0] != "new.test" {
		t.Errorf("asked %+v patterns %q", pr.asked, pr.pats)
	}
	b, _ := os.ReadFile(g.o.ProjectFile)
	if !strings.Contains(string(b), "allow net new.test\n") {
		t.Errorf("project file:\n%s", b)
	}
	// Applied at once: no second prompt.
	if v := g.CheckNet(context.Background(), NetRequest{Host: "new.test", Port: 443}); !v.Allowed || len(pr.asked) != 1 {
		t.Errorf("second connection: %+v, asked %d times", v, len(pr.asked))
	}
	// A non-web port is saved with its port.
	g.CheckNet(context.Background(), NetRequest{Host: "db.test", Port: 5432})
	if b, _ := os.ReadFile(g.o.ProjectFile); !strings.Contains(string(b), "allow net db.test:5432\n") {
		t.Errorf("project file:\n%s", b)
	}
	// "Yes for this session" remembers without saving.
	pr.ans = Answer{Choice: Session}
	if v := g.CheckNet(context.Background(), NetRequest{Host: "sess.test", Port: 443}); !v.Allowed {
		t.Errorf("session: %+v", v)
	}
	asked := len(pr.asked)
	if v := g.CheckNet(context.Background(), NetRequest{Host: "sess.test", Port: 443}); !v.Allowed || len(pr.asked) != asked {
		t.Errorf("session answer not remembered: %+v", v)
	}
	if b, _ := os.ReadFile(g.o.ProjectFile); strings.Contains(string(b), "sess.test") {
		t.Errorf("a session answer was saved:\n%s", b)
	}
	// And a refusal is a refusal.
	pr.ans = Answer{Choice: No, Reason: "not that one"}
	if v := g.CheckNet(context.Background(), NetRequest{Host: "other.test", Port: 443}); v.Allowed || !strings.Contains(v.Reason, "not that one") {
		t.Errorf("no: %+v", v)
	}
}

func TestLockfileHosts(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"packages":{"":{},"node_modules/a":{"resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz"},
"node_modules/b":{"resolved":"https://npm.example.com/b.tgz"},"node_modules/c":{"resolved":"file:../c"},
"node_modules/d":{"resolved":"http://plain.example.com/d.tgz"},"node_modules/e":{"resolved":"https://odd.example.com:8443/e.tgz"}}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "yarn.lock"), []byte("a@^1:\n  version \"1.0.0\"\n  resolved \"https://registry.yarnpkg.com/a/-/a-1.0.0.tgz#abc\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Cargo.lock"), []byte("[[package]]\nname = \"x\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"y\"\nsource = \"sparse+https://crates.example.com/index/\"\n[[package]]\nname = \"z\"\nsource = \"git+https://github.com/z/z\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "uv.lock"), []byte("[[package]]\nname = \"p\"\nsource = { registry = \"https://pypi.org/simple\" }\n"), 0o644)
	got := strings.Join(LockfileHosts(dir), " ")
	want := "crates.example.com:443 crates.io:443 files.pythonhosted.org:443 index.crates.io:443 npm.example.com:443 pypi.org:443 registry.npmjs.org:443 registry.yarnpkg.com:443 static.crates.io:443"
	if got != want {
		t.Errorf("LockfileHosts =\n%s\nwant\n%s", got, want)
	}
	// As a rule.
	os.MkdirAll(filepath.Join(dir, ".agents"), 0o755)
	os.WriteFile(filepath.Join(dir, ".agents", "permissions"), []byte("allow net @lockfiles\n"), 0o644)
	g, err := New(Options{Policy: testPolicy(t, dir, ""), Project: dir, ProjectFile: filepath.Join(dir, ".agents", "permissions")})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]Verdict{"npm.example.com": Allow, "plain.example.com": Ask, "github.com": Ask, "odd.example.com": Ask} {
		if d, _ := g.DecideNet(NetRequest{Host: host, Port: 443}); d.Verdict != want {
			t.Errorf("%s: %v, want %v", host, d.Verdict, want)
		}
	}
}

// TestLockfileNeverLocal: the agent can write a lockfile, so what one
// names must never open loopback, the local network or an IP literal.
func TestLockfileNeverLocal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"packages":{
"node_modules/a":{"resolved":"https://localhost/x.tgz"},
"node_modules/b":{"resolved":"https://127.0.0.1/x.tgz"},
"node_modules/c":{"resolved":"https://[::1]/x.tgz"},
"node_modules/d":{"resolved":"https://10.0.0.5/x.tgz"},
"node_modules/e":{"resolved":"https://printer.local/x.tgz"},
"node_modules/f":{"resolved":"https://metadata.google.internal/x.tgz"},
"node_modules/g":{"resolved":"https://intranet/x.tgz"},
"node_modules/h":{"resolved":"https://2130706433/x.tgz"},
"node_modules/i":{"resolved":"https://a.localhost/x.tgz"},
"node_modules/j":{"resolved":"https://169.254.169.254/x.tgz"},
"node_modules/k":{"resolved":"https://registry.npmjs.org/k.tgz"}}}`), 0o644)
	if got := strings.Join(LockfileHosts(dir), " "); got != "registry.npmjs.org:443" {
		t.Errorf("LockfileHosts = %q, want only the public registry", got)
	}
	os.MkdirAll(filepath.Join(dir, ".agents"), 0o755)
	os.WriteFile(filepath.Join(dir, ".agents", "permissions"), []byte("allow net @lockfiles\nallow net @npm\n"), 0o644)
	g, err := New(Options{Policy: testPolicy(t, dir, ""), Project: dir, ProjectFile: filepath.Join(dir, ".agents", "permissions")})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "10.0.0.5", "printer.local", "169.254.169.254"} {
		if v := g.CheckNet(context.Background(), NetRequest{Host: host, Port: 443}); v.Allowed && v.Exact {
			t.Errorf("%s: allowed exactly by %q: a preset reached the local network", host, v.Rule)
		}
	}
	// A public name the lockfiles name is allowed, but never exactly:
	// were it to resolve to a private address, the proxy refuses the dial.
	g, err = New(Options{Policy: testPolicy(t, dir, ""), Project: dir, AllowNet: []string{"@lockfiles"}})
	if err != nil {
		t.Fatal(err)
	}
	d, exact := g.DecideNet(NetRequest{Host: "registry.npmjs.org", Port: 443})
	if d.Verdict != Allow || exact {
		t.Errorf("registry.npmjs.org by @lockfiles: %v exact=%v, want allowed, not exact", d.Verdict, exact)
	}
}

// TestLockfileDrift: a host the lockfiles name that they did not name at
// the last session is reported once, and the record follows.
func TestLockfileDrift(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(t.TempDir(), "sessions", "lockfile-hosts")
	lock := func(hosts ...string) {
		var b strings.Builder
		b.WriteString(`{"packages":{`)
		for i, h := range hosts {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"node_modules/p` + h + `":{"resolved":"https://` + h + `/x.tgz"}`)
		}
		b.WriteString("}}")
		os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(b.String()), 0o644)
	}
	lock("registry.npmjs.org")
	added, first, err := LockfileDrift(dir, state)
	if err != nil || !first || strings.Join(added, " ") != "registry.npmjs.org:443" {
		t.Fatalf("first: %v %v %v", added, first, err)
	}
	if added, first, _ := LockfileDrift(dir, state); first || len(added) != 0 {
		t.Errorf("unchanged: %v %v", added, first)
	}
	lock("registry.npmjs.org", "evil.example.net")
	if added, _, _ := LockfileDrift(dir, state); strings.Join(added, " ") != "evil.example.net:443" {
		t.Errorf("a host added to the lockfile: %v", added)
	}
	if added, _, _ := LockfileDrift(dir, state); len(added) != 0 {
		t.Errorf("reported twice: %v", added)
	}
}

// TestLoopbackForwards: only allow rules the user wrote that name a
// loopback host and a port are forwarded into the walls.
func TestLoopbackForwards(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".agents"), 0o755)
	os.WriteFile(filepath.Join(dir, ".agents", "permissions"), []byte("allow net localhost:8080\nallow net 127.0.0.1\ndeny net 127.0.0.1:22\nallow net @lockfiles\nallow net *:5000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"packages":{"a":{"resolved":"https://localhost:6000/x.tgz"}}}`), 0o644)
	fw, err := LoopbackForwards(Options{Policy: testPolicy(t, dir, ""), Project: dir, ProjectFile: filepath.Join(dir, ".agents", "permissions"), AllowNet: []string{"127.0.0.1:5432", "[::1]:6379", "example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(fw)
	for _, want := range []string{"{localhost 8080}", "{127.0.0.1 5432}", "{::1 6379}"} {
		if !strings.Contains(got, want) {
			t.Errorf("forwards %s lack %s", got, want)
		}
	}
	if len(fw) != 3 {
		t.Errorf("forwards %s: want exactly three (no port-less, denied, preset or wildcard rule)", got)
	}
}
