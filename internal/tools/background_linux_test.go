package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// The roles the test binary plays inside and outside the walls.
const (
	roleEnv     = "HARNESS_TOOLS_TEST_ROLE"
	roleServer  = "devserver" // argv: BIN MARKER PORT: an HTTP server logging each request (/endless: a body without end)
	roleHarness = "harness"   // argv: BIN PROJECT SCRIPT: opens a sandbox, starts SCRIPT in the background, waits
)

func runTestRoles() {
	switch os.Getenv(roleEnv) {
	case roleServer:
		port := os.Args[2]
		fmt.Println("dev server listening on", port)
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			fmt.Println("GET", r.URL.Path)
			if r.URL.Path == "/old" {
				http.Redirect(w, r, "/page", http.StatusFound)
				return
			}
			if r.URL.Path == "/endless" { // a body that never ends
				w.Header().Set("Content-Type", "text/plain")
				line := []byte(strings.Repeat("endless body\n", 1000))
				for {
					if _, err := w.Write(line); err != nil {
						return
					}
				}
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintln(w, "<html><body><h1>hello from the dev server</h1><p>at <a href=\"/docs\">"+r.URL.Path+"</a></p></body></html>")
		})
		fmt.Println(http.ListenAndServe("127.0.0.1:"+port, nil))
		os.Exit(1)
	case roleHarness:
		pol, err := walls.NewPolicy(walls.PolicyOptions{Project: os.Args[1]})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		js := &Jobs{Sandbox: sb}
		if _, err := js.Start(os.Args[2], false); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("started")
		select {}
	}
}

// bgSandbox opens the real bwrap sandbox over a project the test binary
// (the dev server) can be run from.
func bgSandbox(t *testing.T) (sandbox.Sandbox, string, string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "harness-bg-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+err.Error())
	}
	t.Cleanup(func() { sb.Close() })
	// The test binary lives under the host's /tmp, which the walls
	// replace: the dev server runs from a copy the sandbox can see.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "devserver")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return sb, proj, bin
}

// serverScript starts the dev server with a child of its own (a sleep),
// both carrying marker in their command lines so the host can find them.
func serverScript(bin, marker string, port int) string {
	return fmt.Sprintf("sleep 3%d.5 & %s=%s exec %s %s %d", rand.IntN(1e6), roleEnv, roleServer, bin, marker, port)
}

// hostProcs lists the host's processes whose command line holds marker.
func hostProcs(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), marker) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// procsOf lists the processes of a job: the server (marker) and its sleep.
func procsOf(script, marker string) []string {
	sleep := strings.Fields(script)[1]
	return append(hostProcs(marker), hostProcs("sleep\x00"+sleep)...)
}

func waitGone(t *testing.T, script, marker, after string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := procsOf(script, marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still running on the host: %v", after, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func runTool(t *testing.T, r *Registry, name string, in any) llm.Block {
	t.Helper()
	raw, _ := json.Marshal(in)
	return r.Run(context.Background(), llm.Block{Type: llm.BlockToolUse, ID: "x", Name: name, Input: raw})
}

// curlUntil runs curl inside the walls (a later, foreground command) until
// the server answers.
func curlUntil(t *testing.T, r *Registry, port int, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b := runTool(t, r, "bash", map[string]any{"command": fmt.Sprintf("curl -sS http://127.0.0.1:%d%s", port, path), "timeout": 10})
		if strings.Contains(b.Content, "hello from the dev server") {
			return b.Content
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background server never answered: %s\njob: %s", b.Content, runTool(t, r, "bash_output", map[string]any{"id": "job-1"}).Content)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestBackgroundDevServer(t *testing.T) {
	testenv.Slow(t)
	sb, _, bin := bgSandbox(t)
	jobs := &Jobs{Sandbox: sb}
	t.Cleanup(jobs.Close)
	env := &Env{Sandbox: sb, Jobs: jobs}
	r := NewRegistry(GateFunc(func(context.Context, Access) (bool, string) { return true, "" }),
		append(Builtins(env), &BashOutput{Jobs: jobs}, &BashStop{Jobs: jobs})...)
	if !strings.Contains(string(r.Lookup("bash").Spec().Schema), "background") {
		t.Fatal("bash does not offer background")
	}

	marker := fmt.Sprintf("devserver-%d", rand.IntN(1e9))
	port := 18000 + rand.IntN(1000)
	script := serverScript(bin, marker, port)
	b := runTool(t, r, "bash", map[string]any{"command": script, "background": true})
	if b.IsError || !strings.Contains(b.Content, "job-1") {
		t.Fatalf("start: %+v", b)
	}
	curlUntil(t, r, port, "/first")
	out := runTool(t, r, "bash_output", map[string]any{"id": "job-1"}).Content
	if !strings.Contains(out, "dev server listening") || !strings.Contains(out, "GET /first") || !strings.Contains(out, "job-1 is running") {
		t.Fatalf("first read: %s", out)
	}
	curlUntil(t, r, port, "/second")
	out = runTool(t, r, "bash_output", map[string]any{"id": "job-1"}).Content
	if !strings.Contains(out, "GET /second") || strings.Contains(out, "GET /first") || strings.Contains(out, "listening") {
		t.Fatalf("the second read is not only the new output: %s", out)
	}
	if l := jobs.List(); len(l) != 1 || !l[0].Running || l[0].Command != script {
		t.Fatalf("list: %+v", l)
	}
	if len(procsOf(script, marker)) < 2 {
		t.Fatalf("the server and its child are not both running: %v", procsOf(script, marker))
	}

	// Stopped: it and its child are gone.
	b = runTool(t, r, "bash_stop", map[string]any{"id": "job-1"})
	if b.IsError || !strings.Contains(b.Content, "job-1 was stopped") {
		t.Fatalf("stop: %+v", b)
	}
	waitGone(t, script, marker, "bash_stop")
	if l := jobs.List(); l[0].Running {
		t.Fatalf("still listed as running: %+v", l)
	}

	// The end of the session: Close kills what is still running.
	marker2 := marker + "-b"
	script2 := serverScript(bin, marker2, port+1)
	if b := runTool(t, r, "bash", map[string]any{"command": script2, "background": true}); b.IsError {
		t.Fatalf("start 2: %+v", b)
	}
	curlUntil(t, r, port+1, "/")
	jobs.Close()
	waitGone(t, script2, marker2, "the session's end")
	if b := runTool(t, r, "bash", map[string]any{"command": "true", "background": true}); !b.IsError {
		t.Fatalf("a job started after the end: %+v", b)
	}
}

// TestBackgroundDiesWithHarness kills the process that owns the sandbox
// with SIGKILL (no cleanup runs) and asserts on the host that the
// background server and its child are gone.
func TestBackgroundDiesWithHarness(t *testing.T) {
	_, proj, bin := bgSandbox(t)
	marker := fmt.Sprintf("devserver-%d", rand.IntN(1e9))
	script := serverScript(bin, marker, 18000+rand.IntN(1000))
	h := exec.Command(bin, proj, script)
	h.Env = append(os.Environ(), roleEnv+"="+roleHarness)
	stdout, _ := h.StdoutPipe()
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer h.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "started" {
		t.Fatalf("the stand-in harness said %q", line)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(procsOf(script, marker)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the background server did not start: %v", procsOf(script, marker))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := h.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.Wait()
	waitGone(t, script, marker, "kill -9 of harness")
}

// TestWebFetchLoopbackIsTheSandboxs: web_fetch of localhost reaches the dev
// server the agent started in the background inside the walls (its log
// shows the request), converted to Markdown, redirects between its pages
// followed, without a question; a server on the host's own loopback is not
// what it reaches; a port where nothing listens says so.
func TestWebFetchLoopbackIsTheSandboxs(t *testing.T) {
	testenv.Slow(t)
	sb, _, bin := bgSandbox(t)
	jobs := &Jobs{Sandbox: sb}
	t.Cleanup(jobs.Close)
	var asked []string
	proxy := netproxy.Proxy{Decide: func(_ context.Context, host string, port int) netproxy.ConnVerdict {
		asked = append(asked, fmt.Sprintf("%s:%d", host, port))
		return netproxy.ConnVerdict{Reason: "no"}
	}}
	env := &Env{Sandbox: sb, Jobs: jobs}
	r := NewRegistry(GateFunc(func(context.Context, Access) (bool, string) { return true, "" }),
		append(Builtins(env), &BashOutput{Jobs: jobs}, &WebFetch{Proxy: &proxy, Sandbox: sb})...)

	// The host's loopback holds a server; the sandbox's port of the same
	// number holds nothing.
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the HOST's server") }))
	defer host.Close()
	hostURL := host.URL + "/"
	b := runTool(t, r, "web_fetch", map[string]any{"url": hostURL})
	if !b.IsError || strings.Contains(b.Content, "HOST") || !strings.Contains(b.Content, "nothing answers at "+strings.TrimPrefix(host.URL, "http://")+" inside the sandbox") {
		t.Fatalf("a loopback fetch reached the host, or did not say nothing answers: %+v", b)
	}
	// It says how the user lets the session reach a server of theirs.
	if _, hostPort, _ := strings.Cut(strings.TrimPrefix(host.URL, "http://"), ":"); !strings.Contains(b.Content, "--allow-net 127.0.0.1:"+hostPort) {
		t.Errorf("the refusal does not name --allow-net for the port: %s", b.Content)
	}

	port := 19000 + rand.IntN(1000)
	marker := fmt.Sprintf("devserver-%d", rand.IntN(1e9))
	if b := runTool(t, r, "bash", map[string]any{"command": serverScript(bin, marker, port), "background": true}); b.IsError {
		t.Fatalf("start: %+v", b)
	}
	url := fmt.Sprintf("http://localhost:%d/old", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		b = runTool(t, r, "web_fetch", map[string]any{"url": url})
		if !b.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dev server never answered web_fetch: %s", b.Content)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, want := range []string{
		fmt.Sprintf("URL: http://localhost:%d/page\n", port), "Status: 200 OK\n", "Redirected from: " + url + "\n",
		"# hello from the dev server", fmt.Sprintf("at [/page](http://localhost:%d/docs)", port),
	} {
		if !strings.Contains(b.Content, want) {
			t.Errorf("missing %q in:\n%s", want, b.Content)
		}
	}
	if log := runTool(t, r, "bash_output", map[string]any{"id": "job-1"}).Content; !strings.Contains(log, "GET /old\nGET /page\n") {
		t.Errorf("the requests did not reach the background server: %s", log)
	}
	if len(asked) != 0 {
		t.Errorf("a loopback fetch asked the proxy: %v", asked)
	}
}
