package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// npmDirEnv names the directory the reference servers were installed in
// with npm install --prefix (.ci/run does it); the default is
// ~/.cache/harness-test/mcp-npm.
const npmDirEnv = "HARNESS_MCP_NPM"

// npmServer is the installed bin of a reference server, or skips (fails
// under HARNESS_REQUIRE=mcp-npm) saying how to install it.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	dir := os.Getenv(npmDirEnv)
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "harness-test", "mcp-npm")
	}
	install := "npm install --prefix " + dir + " @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything @modelcontextprotocol/server-memory"
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, testenv.MCPNpm, "node is not installed (apt-get install nodejs npm), then "+install)
	}
	p := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, testenv.MCPNpm, bin+" is not installed in "+dir+" ("+npmDirEnv+"): run "+install)
	}
	return p
}

// TestFilesystemServerWalls: the reference filesystem server, told it may
// use /, runs inside the bwrap walls: it writes in the project, but not
// outside it or in the home directory, and cannot read ~/.ssh; all
// asserted on the host. When the session ends, no process of its remains.
func TestFilesystemServerWalls(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	bin := npmServer(t, "mcp-server-filesystem")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	// The project as a second allowed directory marks its command line
	// (the sandbox's own launcher, which runs until the sandbox closes, has
	// the project in its command line too, but not the server's path).
	m := start(t, sb, Options{}, Server{Name: "fs", Command: bin, Args: []string{"/", f.proj}, Scope: ScopeProject})
	ts := m.Tools(false)
	names := map[string]bool{}
	for _, tl := range ts {
		names[tl.Spec().Name] = true
	}
	read := "mcp__fs__read_text_file"
	if !names[read] {
		read = "mcp__fs__read_file"
	}
	if !names["mcp__fs__write_file"] || !names[read] {
		t.Fatalf("filesystem tools: %v", names)
	}

	inside := filepath.Join(f.proj, "inside.txt")
	res := run(t, ts, "mcp__fs__write_file", `{"path":"`+inside+`","content":"written by mcp"}`)
	if got, err := os.ReadFile(inside); err != nil || string(got) != "written by mcp" {
		t.Errorf("a write inside the project: %+v; on the host: %q %v", res, got, err)
	}
	for _, p := range []string{filepath.Join(f.base, "outside.txt"), filepath.Join(f.home, "planted.txt"), filepath.Join(f.home, ".bashrc")} {
		res := run(t, ts, "mcp__fs__write_file", `{"path":"`+p+`","content":"escaped"}`)
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the server wrote %s outside the project (result %q)", p, res.Content)
		}
		if !res.IsError {
			t.Errorf("write to %s: no error reached the model: %q", p, res.Content)
		}
	}
	secret := run(t, ts, read, `{"path":"`+filepath.Join(f.home, ".ssh", "id_ed25519")+`"}`)
	if strings.Contains(secret.Content, "SECRET-KEY-MATERIAL") {
		t.Errorf("the server read ~/.ssh: %q", secret.Content)
	}
	// Nor the remote servers' OAuth tokens.
	if tok := run(t, ts, read, `{"path":"`+AuthFile(f.home)+`"}`); strings.Contains(tok.Content, "OAUTH-TOKEN-MATERIAL") || !tok.IsError {
		t.Errorf("the server read the OAuth tokens: %q", tok.Content)
	}
	if len(procsMatching(bin, f.proj)) == 0 {
		t.Fatalf("no process of the server found on the host while it runs (the check below would prove nothing)")
	}
	m.Close()
	if left := procsMatching(bin, f.proj); len(left) > 0 {
		t.Errorf("processes outlived the session: %q", left)
	}
}

// TestNoServerProcessOutlives: a server that started a process in a
// session of its own (as a daemon would) leaves nothing behind when the
// session ends.
func TestNoServerProcessOutlives(t *testing.T) {
	needBwrap(t)
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	m := start(t, sb, Options{}, f.goServer("go", "full"))
	marker := "harness-orphan-" + filepath.Base(f.base)
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__go__spawn","arguments":{"text":"`+marker+`"}}`); res.IsError {
		t.Fatalf("spawn: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(procsMatching(marker)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(procsMatching(marker)) == 0 || len(procsMatching(f.bin)) == 0 {
		t.Fatalf("the server (%s) or its daemon (%s) is not running on the host", f.bin, marker)
	}
	m.Close()
	if left := append(procsMatching(marker), procsMatching(f.bin)...); len(left) > 0 {
		t.Errorf("processes outlived the session: %q", left)
	}
}

// TestReferenceServers: the reference everything and memory servers from
// npm, inside the walls: tools listed and called, results as text.
func TestReferenceServers(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	everything := npmServer(t, "mcp-server-everything")
	memory := npmServer(t, "mcp-server-memory")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	m := start(t, sb, Options{},
		Server{Name: "everything", Command: everything, Args: []string{"stdio"}, Scope: ScopeUser},
		Server{Name: "memory", Command: memory, Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(f.proj, "memory.jsonl")}, Scope: ScopeUser})
	ts := m.Tools(true)
	if res := run(t, ts, "mcp_search", `{"query":"echo"}`); !strings.Contains(res.Content, "mcp__everything__echo") {
		t.Errorf("search echo: %s", res.Content)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__everything__echo","arguments":{"message":"hi from harness"}}`); res.IsError || !strings.Contains(res.Content, "hi from harness") {
		t.Errorf("everything echo: %+v", res)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__memory__create_entities","arguments":{"entities":[{"name":"harness","entityType":"project","observations":["written in Go"]}]}}`); res.IsError {
		t.Errorf("memory create_entities: %+v", res)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__memory__read_graph","arguments":{}}`); !strings.Contains(res.Content, "written in Go") {
		t.Errorf("memory read_graph: %+v", res)
	}
	if raw, err := os.ReadFile(filepath.Join(f.proj, "memory.jsonl")); err != nil || !strings.Contains(string(raw), "written in Go") {
		t.Errorf("the memory file in the project, on the host: %q %v", raw, err)
	}
	_ = context.Background
}

// TestEverythingFeatures: the reference everything server from npm,
// inside the walls: its prompts are commands (arguments in order, quoted,
// by name), its resources read as text, a long-running tool's
// notifications/progress reach the call's live output, and a resource it
// registers at run time arrives through resources/list_changed.
func TestEverythingFeatures(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	everything := npmServer(t, "mcp-server-everything")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	var mu sync.Mutex
	var notes []string
	m := start(t, sb, Options{Notify: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }},
		Server{Name: "everything", Command: everything, Args: []string{"stdio"}, Scope: ScopeUser})
	ctx := context.Background()

	simple, ok := m.PromptByCommand("mcp__everything__simple-prompt")
	if !ok {
		t.Fatalf("no simple-prompt among %+v", m.Prompts())
	}
	if got, err := m.GetPrompt(ctx, simple, ""); err != nil || got != "This is a simple prompt without arguments." {
		t.Errorf("simple-prompt: %q %v", got, err)
	}
	args, ok := m.PromptByCommand("mcp__everything__args-prompt")
	if !ok || args.Hint() != "<city> [state]" {
		t.Fatalf("args-prompt: %+v %v", args, ok)
	}
	if got, err := m.GetPrompt(ctx, args, `"San Francisco" CA`); err != nil || got != "What's weather in San Francisco, CA?" {
		t.Errorf("args-prompt: %q %v", got, err)
	}
	if got, err := m.GetPrompt(ctx, args, `city=Paris`); err != nil || got != "What's weather in Paris?" {
		t.Errorf("args-prompt by name: %q %v", got, err)
	}

	var doc Resource
	for _, r := range m.Resources() {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") && strings.HasSuffix(r.URI, "features.md") {
			doc = r
		}
	}
	if doc.URI == "" {
		t.Fatalf("no static document among %+v", m.Resources())
	}
	if got, err := m.ReadResource(ctx, "everything", doc.URI); err != nil || !strings.Contains(got, "Everything Server - Features") {
		t.Errorf("read %s: %.200q %v", doc.URI, got, err)
	}

	// Progress: three steps over a second and a half, each a line of the
	// call's live output while it runs.
	var pmu sync.Mutex
	var progress []string
	pctx := tools.WithProgress(ctx, func(s string) { pmu.Lock(); progress = append(progress, s); pmu.Unlock() })
	r := tools.NewRegistry(allowAll, m.Tools(true)...)
	res := r.Run(pctx, llm.Block{Type: llm.BlockToolUse, ID: "p", Name: "mcp_call",
		Input: json.RawMessage(`{"name":"mcp__everything__trigger-long-running-operation","arguments":{"duration":1.5,"steps":3}}`)})
	if res.IsError || !strings.Contains(res.Content, "Long running operation completed") {
		t.Errorf("long-running: %+v", res)
	}
	pmu.Lock()
	// The last notification may arrive after the result (the server sends
	// it just before answering): the call is over, and it is not shown.
	if got := strings.Join(progress, ""); len(progress) < 2 || !strings.HasPrefix("progress 1/3 (33%)\nprogress 2/3 (66%)\nprogress 3/3 (100%)\n", got) {
		t.Errorf("progress shown: %q", got)
	}
	pmu.Unlock()

	// A resource registered at run time (gzip of a data: URI, no network).
	before := len(m.Resources())
	res = run(t, m.Tools(true), "mcp_call", `{"name":"mcp__everything__gzip-file-as-resource","arguments":{"name":"hello.gz","data":"data:text/plain;base64,aGVsbG8gaGFybmVzcw=="}}`)
	if res.IsError {
		t.Fatalf("gzip-file-as-resource: %+v", res)
	}
	waitFor(t, "resources/list_changed", func() bool { return m.Changes("everything", "resources") > 0 && len(m.Resources()) > before })
	found := false
	for _, r := range m.Resources() {
		found = found || r.URI == "demo://resource/session/hello.gz"
	}
	if !found {
		t.Errorf("the session resource is not listed after list_changed: %+v", m.Resources())
	}
	if got, err := m.ReadResource(ctx, "everything", "demo://resource/session/hello.gz"); err != nil || !strings.Contains(got, "application/gzip") || !strings.Contains(got, "not shown") {
		t.Errorf("the gzip resource (binary, described): %q %v", got, err)
	}
	mu.Lock()
	if !strings.Contains(strings.Join(notes, "\n"), "MCP server everything changed its resources") {
		t.Errorf("the user was not told: %q", notes)
	}
	mu.Unlock()
}

// TestFilesystemServerRoots: the reference filesystem server started
// without directories, inside the walls, works on the project and the
// --add-dir root because harness gives them as roots (the policy's
// writable roots); a path outside them is refused by the server.
func TestFilesystemServerRoots(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	bin := npmServer(t, "mcp-server-filesystem")
	f := newFixture(t)
	extra := filepath.Join(f.base, "extra")
	os.MkdirAll(extra, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: f.proj, AddDirs: []string{extra}, Home: f.home, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	m := start(t, sb, Options{}, Server{Name: "fs", Command: bin, Scope: ScopeProject})
	ts := m.Tools(false)
	// The server asks for the roots after the handshake, on its own time.
	var dirs string
	waitFor(t, "the roots to reach the server", func() bool {
		dirs = run(t, ts, "mcp__fs__list_allowed_directories", `{}`).Content
		return strings.Contains(dirs, f.proj) && strings.Contains(dirs, extra)
	})
	for _, dir := range []string{f.proj, extra} {
		p := filepath.Join(dir, "hello.txt")
		if res := run(t, ts, "mcp__fs__write_file", `{"path":"`+p+`","content":"from the server"}`); res.IsError {
			t.Errorf("write in %s: %+v", dir, res)
		}
		if raw, err := os.ReadFile(p); err != nil || string(raw) != "from the server" {
			t.Errorf("%s on the host: %q %v", p, raw, err)
		}
	}
	if res := run(t, ts, "mcp__fs__read_text_file", `{"path":"`+filepath.Join(f.home, ".bashrc")+`"}`); !res.IsError {
		t.Errorf("a path outside the roots was read: %+v", res)
	}
}

// TestEverythingCapabilities: the reference everything server, inside
// the walls, sees harness's roots (its get-roots-list tool is offered
// only to a client that declares them), its tiny image reaches the model
// as an image, its instructions are offered for the system prompt, and
// its simulated log messages reach Options.Log.
func TestEverythingCapabilities(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	everything := npmServer(t, "mcp-server-everything")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	var mu sync.Mutex
	var logged []string
	m := start(t, sb, Options{Images: true, Log: func(server, level, text string) {
		mu.Lock()
		logged = append(logged, server+" "+level+" "+text)
		mu.Unlock()
	}}, Server{Name: "everything", Command: everything, Args: []string{"stdio"}, Scope: ScopeUser})
	ts := m.Tools(false)

	// Without Elicit and Sample harness declares neither, and the server
	// offers none of the tools that need them.
	for _, tl := range ts {
		if n := tl.Spec().Name; strings.Contains(n, "elicitation") || strings.Contains(n, "sampling") {
			t.Errorf("%s is offered though harness declared neither elicitation nor sampling", n)
		}
	}
	roots := run(t, ts, "mcp__everything__get-roots-list", `{}`)
	if roots.IsError || !strings.Contains(roots.Content, "file://"+f.proj) {
		t.Errorf("get-roots-list: %+v", roots)
	}
	img := run(t, ts, "mcp__everything__get-tiny-image", `{}`)
	if img.IsError || img.Image == nil || !strings.Contains(img.Content, "shown to you as an image") {
		t.Errorf("get-tiny-image: %.300s (image %v)", img.Content, img.Image != nil)
	}
	if got := m.Instructions(); !strings.HasPrefix(got, "## everything\n# Everything Server") || len(got) > InstructionsPerServer+200 {
		t.Errorf("instructions: %.200q (%d bytes)", got, len(got))
	}
	if res := run(t, ts, "mcp__everything__toggle-simulated-logging", `{}`); res.IsError {
		t.Fatalf("toggle-simulated-logging: %+v", res)
	}
	// One at once, then one every 5 s at a random level (debug, under
	// the info harness asks for, is not sent): 20 s is 4 chances.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		got := strings.Join(logged, "\n")
		mu.Unlock()
		if strings.HasPrefix(got, "everything ") && strings.Contains(got, "message") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log message of the everything server in 20 s: %q", got)
		}
	}
}

// TestEverythingAsks: the reference everything server, inside the walls,
// offers its elicitation and sampling tools once harness declares both
// (not its URL elicitation tool: harness declares form mode only).
// harness reads its whole form (strings with formats, bounded numbers,
// enums titled three ways, multi-select lists) with the defaults; the
// answer given with the name alone gets the other defaults filled in;
// its sampling request reaches Options.Sample with its system prompt and
// maxTokens, and the reply reaches the server.
func TestEverythingAsks(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	everything := npmServer(t, "mcp-server-everything")
	f := newFixture(t)
	a := &asker{answer: ElicitAnswer{Action: ElicitAccept, Content: map[string]any{"name": "Ann"}}}
	m := start(t, f.open(t, sandbox.BackendBwrap), Options{Elicit: a.elicit, Sample: a.sample},
		Server{Name: "everything", Command: everything, Args: []string{"stdio"}, Scope: ScopeUser})
	ts := m.Tools(false)
	names := map[string]bool{}
	for _, tl := range ts {
		names[tl.Spec().Name] = true
	}
	for _, n := range []string{"mcp__everything__trigger-elicitation-request", "mcp__everything__trigger-sampling-request"} {
		if !names[n] {
			t.Fatalf("%s is not offered though harness declares what it needs", n)
		}
	}
	if names["mcp__everything__trigger-url-elicitation"] {
		t.Error("the URL elicitation tool is offered: harness declared URL mode")
	}

	res := run(t, ts, "mcp__everything__trigger-elicitation-request", `{}`)
	for _, want := range []string{"User provided the requested information", "- Name: Ann", `"firstLine": "It was a dark and stormy night."`, `"integer": 42`, `"untitledMultipleSelectEnum": [`} {
		if res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("elicitation result lacks %q: %.1500s", want, res.Content)
		}
	}
	if len(a.forms) != 1 {
		t.Fatalf("%d forms", len(a.forms))
	}
	byName := map[string]Field{}
	for _, fl := range a.forms[0].Fields {
		byName[fl.Name] = fl
	}
	if len(byName) < 12 || a.forms[0].Fields[0].Name != "name" || !byName["name"].Required {
		t.Errorf("fields: %+v", a.forms[0].Fields)
	}
	if fl := byName["legacyTitledEnum"]; len(fl.Options) != 5 || fl.Options[1] != (Choice{Value: "pet-2", Title: "Dogs"}) || fl.DefaultText() != "pet-1" {
		t.Errorf("legacyTitledEnum: %+v", fl)
	}
	if fl := byName["titledMultipleSelectEnum"]; fl.Type != "array" || len(fl.Options) != 3 || fl.Options[0].Title != "Tuna" || fl.DefaultText() != "fish-1" {
		t.Errorf("titledMultipleSelectEnum: %+v", fl)
	}
	if fl := byName["integer"]; fl.Min == nil || *fl.Min != 1 || fl.DefaultText() != "42" {
		t.Errorf("integer: %+v", fl)
	}

	res = run(t, ts, "mcp__everything__trigger-sampling-request", `{"prompt":"hi","maxTokens":30}`)
	if res.IsError || !strings.Contains(res.Content, "LLM sampling result") || !strings.Contains(res.Content, "hello Resource trigger-sampling-request context: hi") {
		t.Errorf("sampling result: %.600s", res.Content)
	}
	if len(a.samples) != 1 || a.samples[0].System != "You are a helpful test server." || a.samples[0].MaxTokens != 30 {
		t.Errorf("the sampling request: %+v", a.samples)
	}
}
