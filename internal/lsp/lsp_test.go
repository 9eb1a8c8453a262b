//go:build unix

package lsp

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// fakeManager runs the fake server (this test binary) in mode for .go
// files of a fresh project; notes collects what it tells the user.
func fakeManager(t *testing.T, mode string, o Options) (*Manager, string, *notes) {
	t.Helper()
	project := t.TempDir()
	n := &notes{}
	o.Sandbox = &hostSandbox{}
	o.Project = project
	o.Servers = []Server{{Name: "Go", Extensions: []string{".go"}, Candidates: [][]string{{"/usr/bin/env", fakeEnv + "=" + mode, os.Args[0]}}}}
	o.Notify = n.add
	if o.Wait == 0 {
		o.Wait = 5 * time.Second
	}
	m := New(o)
	t.Cleanup(func() { m.Close() })
	return m, project, n
}

type notes struct {
	mu sync.Mutex
	l  []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.l = append(n.l, s); n.mu.Unlock() }
func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.l...)
}

func TestDiagnoseReportsTheVersionsErrors(t *testing.T) {
	testenv.Slow(t)
	m, project, n := fakeManager(t, "ok", Options{Warnings: 1})
	path := filepath.Join(project, "main.go")
	got := m.Diagnose(context.Background(), path, []byte("package main\n\n// 😀 ERROR here\nWARN a\nWARN b\n"))
	want := "The language server reports, for this version of main.go:\n" +
		"main.go:3:9: error: found ERROR second line\n" + // the emoji: 2 UTF-16 units, 4 bytes
		"main.go:4:1: warning: found WARN second line"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// The fix: the next version is clean, and no stale error remains.
	if got := m.Diagnose(context.Background(), path, []byte("package main\n")); got != "" {
		t.Fatalf("after the fix: %q", got)
	}
	// Another file's errors published meanwhile come too.
	got = m.Diagnose(context.Background(), path, []byte("package main // BREAKOTHER\n"))
	if !strings.Contains(got, "Errors the language server now reports in other files:\nother.go:3:5: error: undefined: gone") {
		t.Fatalf("other files: %q", got)
	}
	if len(n.all()) != 0 {
		t.Fatalf("notes: %v", n.all())
	}
}

func TestWarningsOffByDefault(t *testing.T) {
	m, project, _ := fakeManager(t, "ok", Options{})
	if got := m.Diagnose(context.Background(), filepath.Join(project, "a.go"), []byte("WARN\n")); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestNotAFileOfAnyServer(t *testing.T) {
	m, project, n := fakeManager(t, "ok", Options{})
	if got := m.Diagnose(context.Background(), filepath.Join(project, "README.md"), []byte("ERROR")); got != "" {
		t.Fatalf("got %q", got)
	}
	if len(m.clients) != 0 || len(n.all()) != 0 {
		t.Fatalf("a server started for a Markdown file: %v %v", m.clients, n.all())
	}
}

// TestBounded: whatever the server does, an edit returns within its bound,
// gets no error of another version, and a failure is said once.
func TestBounded(t *testing.T) {
	testenv.Slow(t)
	for _, tc := range []struct {
		mode, note string
		want       string // in the second edit's result
	}{
		{mode: "silent"},
		{mode: "noinit", note: ""}, // still starting: no note until initBound
		{mode: "crash", note: "exited with code 3; its last output on stderr: fake: cannot go on"},
		{mode: "garbage", note: "sent what is not LSP (the language server's connection closed: malformed Content-Length \"many\") and was stopped"},
		{mode: "stale", want: "main.go:1:1: error: found ERROR"},
		{mode: "noversion", want: "main.go:1:1: error: found ERROR"},
		{mode: "twostep", want: "main.go:1:1: error: found ERROR"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// A server that answers gets time to start on a loaded
			// machine (a -race binary); one that never does costs the
			// first edit the whole start bound.
			wait, startWait := 700*time.Millisecond, 500*time.Millisecond
			if tc.want != "" {
				startWait = 10 * time.Second
			}
			m, project, n := fakeManager(t, tc.mode, Options{Wait: wait, StartWait: startWait})
			path := filepath.Join(project, "main.go")
			for i := range 2 {
				start := time.Now()
				got := m.Diagnose(context.Background(), path, []byte("ERROR\n"))
				bound := wait + time.Second // scheduling slack on a loaded machine
				if i == 0 {
					bound += startWait
				}
				if took := time.Since(start); took > bound {
					t.Fatalf("edit %d took %v, over its bound", i, took)
				}
				if strings.Contains(got, "stale") {
					t.Fatalf("an older version's error: %q", got)
				}
				if i == 1 && got != "" && tc.want == "" || tc.want != "" && !strings.Contains(got, tc.want) {
					t.Fatalf("edit %d: got %q, want %q", i, got, tc.want)
				}
			}
			if tc.note != "" {
				deadline := time.Now().Add(5 * time.Second)
				for len(n.all()) == 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if l := n.all(); len(l) != 1 || !strings.Contains(l[0], tc.note) {
					t.Fatalf("notes %q, want one with %q", l, tc.note)
				}
			}
		})
	}
}

// TestCrashSaidOnceAndNotRestarted: a dead server costs later edits
// nothing, and is said once.
func TestCrashSaidOnceAndNotRestarted(t *testing.T) {
	m, project, n := fakeManager(t, "crash", Options{Wait: 2 * time.Second})
	path := filepath.Join(project, "main.go")
	m.Diagnose(context.Background(), path, []byte("x"))
	deadline := time.Now().Add(5 * time.Second)
	for len(n.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	for range 3 {
		m.Diagnose(context.Background(), path, []byte("x"))
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("edits after the crash took %v", took)
	}
	if l := n.all(); len(l) != 1 || !strings.Contains(l[0], "the Go language server") || !strings.Contains(l[0], "no diagnostics for the rest of the session") {
		t.Fatalf("notes: %q", l)
	}
	if runs := m.o.Sandbox.(*hostSandbox).runs.Load(); runs != 1 {
		t.Fatalf("%d starts, want 1", runs)
	}
}

func TestMissingServerSaidOnce(t *testing.T) {
	n := &notes{}
	m := New(Options{Sandbox: &hostSandbox{}, Project: t.TempDir(), Servers: Builtin(), Path: t.TempDir(), Notify: n.add})
	defer m.Close()
	for range 2 {
		if got := m.Diagnose(context.Background(), filepath.Join(m.o.Project, "x.py"), []byte("ERROR")); got != "" {
			t.Fatalf("got %q", got)
		}
	}
	want := "no Python language server: pyright-langserver or pylsp is not on PATH; edits of .py files get no diagnostics"
	if l := n.all(); len(l) != 1 || l[0] != want {
		t.Fatalf("notes %q, want [%q]", l, want)
	}
}

// TestCloseKillsTheServer: the server ends with the session.
func TestCloseKillsTheServer(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("HARNESS_FAKE_LSP_PIDFILE", pidfile)
	for _, mode := range []string{"ok", "noinit"} { // answers shutdown; never answers
		t.Run(mode, func(t *testing.T) {
			os.Remove(pidfile)
			m, project, _ := fakeManager(t, mode, Options{Wait: 300 * time.Millisecond, StartWait: 300 * time.Millisecond})
			m.Diagnose(context.Background(), filepath.Join(project, "a.go"), []byte("x"))
			// The edit's bound may end before the server has started.
			var data []byte
			var err error
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if data, err = os.ReadFile(pidfile); err == nil && len(data) > 0 {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(string(data))
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("the server is not running before Close: %v", err)
			}
			start := time.Now()
			m.Close()
			if err := syscall.Kill(pid, 0); err == nil {
				t.Fatalf("the server (pid %d) still runs after Close", pid)
			}
			t.Logf("closed in %v", time.Since(start))
			if got := m.Diagnose(context.Background(), filepath.Join(project, "a.go"), []byte("ERROR")); got != "" {
				t.Fatalf("after Close: %q", got)
			}
		})
	}
}

func TestFraming(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "Content-Length: 2\r\n\r\n{}", want: "{}"},
		{in: "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}", want: "{}"},
		{in: "Content-Length: 5\r\n\r\n{}", err: "reading a 5-byte message"},
		{in: "Content-Type: x\r\n\r\n{}", err: "without Content-Length"},
		{in: "Content-Length: x\r\n\r\n", err: "malformed Content-Length"},
		{in: "Content-Length: 99999999\r\n\r\n", err: "over the 16777216-byte limit"},
		{in: "garbage\r\n\r\n", err: "malformed header"},
		{in: "X: " + strings.Repeat("a", 5000) + "\r\n", err: "over 4096 bytes"},
	} {
		got, err := readMessage(bufio.NewReader(strings.NewReader(tc.in)))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", clip(tc.in, 40), err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v", clip(tc.in, 40), got, err)
		}
	}
}

func TestParseSetting(t *testing.T) {
	for _, tc := range []struct {
		setting string
		path    string
		want    string // the first candidate's command, "" for none
		err     string
	}{
		{"", "a.go", "gopls", ""},
		{"off", "a.go", "", ""},
		{".go=", "a.go", "", ""},
		{".go=", "a.rs", "rust-analyzer", ""},
		{".py=pylsp", "a.py", "pylsp", ""},
		{".py=pylsp", "a.pyi", "pyright-langserver", ""},
		{".zig=zls --x; .ts,.tsx=deno lsp", "a.zig", "zls", ""},
		{".zig=zls --x; .ts,.tsx=deno lsp", "a.TSX", "deno", ""},
		{".zig=zls --x; .ts,.tsx=deno lsp", "a.js", "typescript-language-server", ""},
		{"zig=zls", "", "", "not a file extension"},
		{".zig", "", "", "has no '='"},
	} {
		s, err := ParseSetting(Builtin(), tc.setting)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.setting, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.setting, err)
		}
		got := ""
		if srv := serverFor(s, tc.path); srv != nil {
			got = srv.Candidates[0][0]
		}
		if got != tc.want {
			t.Errorf("%q, %s: %q, want %q", tc.setting, tc.path, got, tc.want)
		}
	}
}

func TestFormatCaps(t *testing.T) {
	var ds []diagnostic
	for i := range 200 {
		ds = append(ds, diagnostic{Range: lspRange{Start: position{Line: i}}, Message: strings.Repeat("x", 100)})
	}
	others := map[string][]diagnostic{}
	for i := range 20 {
		others["/p/f"+strconv.Itoa(i)+".go"] = ds[:1]
	}
	got := format(report{path: "/p/a.go", items: ds}, "/p", "", 0, 1000)
	if len(got) > 1100 || !strings.Contains(got, "more bytes of diagnostics cut") {
		t.Fatalf("%d bytes: %q", len(got), got)
	}
	got = format(report{path: "/p/a.go", others: others}, "/p", "", 0, 1<<20)
	if n := strings.Count(got, "\nf"); n != maxOtherFiles || !strings.Contains(got, "… and 10 more error(s) in other files") {
		t.Fatalf("%d other lines: %q", n, got)
	}
}

// TestFollowPlanStops: a switch into plan mode stops the servers started
// under the writable walls; the next edit starts one again.
func TestFollowPlanStops(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("HARNESS_FAKE_LSP_PIDFILE", pidfile)
	m, project, _ := fakeManager(t, "ok", Options{})
	path := filepath.Join(project, "a.go")
	if got := m.Diagnose(context.Background(), path, []byte("ERROR")); got == "" {
		t.Fatal("no diagnostics before the switch")
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(string(data))
	if notes := m.Follow(false); len(notes) != 0 {
		t.Fatalf("out of plan mode: %q", notes)
	}
	notes := m.Follow(true)
	if len(notes) != 1 || !strings.Contains(notes[0], "stopped the Go language server") {
		t.Fatalf("notes %q", notes)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("the server (pid %d) still runs after the switch", pid)
	}
	if got := m.Diagnose(context.Background(), path, []byte("ERROR")); !strings.Contains(got, "error: found ERROR") {
		t.Fatalf("after the switch: %q", got)
	}
	if runs := m.o.Sandbox.(*hostSandbox).runs.Load(); runs != 2 {
		t.Fatalf("%d starts, want 2", runs)
	}
}
