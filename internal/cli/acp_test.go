package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	pngenc "image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

// acpClient is a test editor speaking ACP to runACP over pipes.
type acpClient struct {
	t   *testing.T
	w   io.WriteCloser
	mu  sync.Mutex
	id  int
	res map[int]chan json.RawMessage
	err map[int]string
	// updates are every session/update, in order.
	updates []map[string]any
	// permission answers session/request_permission with an option id;
	// "" never answers.
	permission func(params map[string]any) string
	asked      []map[string]any
	stdout     []string // every line harness wrote on stdout
	done       chan error
}

func startACP(t *testing.T, dir string, args ...string) *acpClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &acpClient{t: t, w: inW, res: map[int]chan json.RawMessage{}, err: map[int]string{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	go func() {
		// The editor spawns harness somewhere else than the project.
		g := &globalOptions{Backend: "auto"}
		cmd := newACPCommand(g, Stdio{In: inR, Out: outW, Err: &stderr})
		cmd.SetArgs(args)
		cmd.SetContext(ctx)
		err := cmd.Execute()
		outW.Close()
		c.done <- err
	}()
	go c.read(outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("harness acp: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("harness acp did not end within 10 s of stdin closing")
			cancel()
		}
		cancel()
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	return c
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func (c *acpClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		c.mu.Lock()
		c.stdout = append(c.stdout, line)
		c.mu.Unlock()
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Errorf("harness wrote a line on stdout that is not JSON-RPC: %q", line)
			continue
		}
		switch {
		case m.Method == "session/update":
			var p struct {
				Update map[string]any `json:"update"`
			}
			_ = json.Unmarshal(m.Params, &p)
			c.mu.Lock()
			c.updates = append(c.updates, p.Update)
			c.mu.Unlock()
		case m.Method == "session/request_permission":
			var p map[string]any
			_ = json.Unmarshal(m.Params, &p)
			c.mu.Lock()
			c.asked = append(c.asked, p)
			answer := c.permission
			c.mu.Unlock()
			opt := ""
			if answer != nil {
				opt = answer(p)
			}
			if opt != "" {
				c.send(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}}})
			}
		case m.Method != "":
			c.t.Errorf("unexpected request from harness: %s", line)
		case m.ID != nil:
			c.mu.Lock()
			ch := c.res[*m.ID]
			if m.Error != nil {
				c.err[*m.ID] = m.Error.Message
			}
			c.mu.Unlock()
			if ch != nil {
				ch <- m.Result
			}
		}
	}
}

func (c *acpClient) setPermission(f func(map[string]any) string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.permission = f
}

func (c *acpClient) send(v any) {
	b, _ := json.Marshal(v)
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Errorf("writing to harness: %v", err)
	}
}

// start sends a request and returns the channel of its answer.
func (c *acpClient) start(method string, params any) (int, chan json.RawMessage) {
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan json.RawMessage, 1)
	c.res[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id, ch
}

func (c *acpClient) wait(id int, ch chan json.RawMessage, within time.Duration, v any) {
	c.t.Helper()
	select {
	case r := <-ch:
		c.mu.Lock()
		msg := c.err[id]
		c.mu.Unlock()
		if msg != "" {
			c.t.Fatalf("request %d failed: %s", id, msg)
		}
		if v != nil {
			if err := json.Unmarshal(r, v); err != nil {
				c.t.Fatalf("answer %s: %v", r, err)
			}
		}
	case <-time.After(within):
		c.t.Fatalf("no answer to request %d within %s", id, within)
	}
}

func (c *acpClient) call(method string, params, v any) {
	c.t.Helper()
	id, ch := c.start(method, params)
	c.wait(id, ch, 60*time.Second, v)
}

// takeUpdates returns the updates so far and forgets them.
func (c *acpClient) takeUpdates() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

// waitUpdate waits for an update of kind.
func (c *acpClient) waitUpdate(kind string, within time.Duration) map[string]any {
	c.t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		got := ofKind(c.updates, kind)
		c.mu.Unlock()
		if len(got) > 0 {
			return got[0]
		}
	}
	c.t.Fatalf("no %s update within %s", kind, within)
	return nil
}

func ofKind(us []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, u := range us {
		if u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

func acpEnv(t *testing.T) (*llmtest.Server, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("NO_COLOR", "1")
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
	srv := llmtest.NewServer(t)
	for k, v := range map[string]string{"PROVIDER": "anthropic", "MODEL": "fake-model", "API_KEY": "sk-fake-key-for-tests-0123456789", "BASE_URL": srv.URL} {
		t.Setenv(k, v)
	}
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, proj
}

func newACPSession(t *testing.T, c *acpClient, proj string) string {
	t.Helper()
	var init struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession        bool `json:"loadSession"`
			PromptCapabilities struct {
				Image, EmbeddedContext bool
			} `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
	}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &init)
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.Image {
		t.Fatalf("initialize: %+v", init)
	}
	var ns struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	c.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{}}, &ns)
	if ns.SessionID == "" || ns.Modes.CurrentModeID != "default" || len(ns.Modes.AvailableModes) != 3 {
		t.Fatalf("session/new: %+v", ns)
	}
	return ns.SessionID
}

func prompt(c *acpClient, sid, text string) string {
	c.t.Helper()
	var r struct {
		StopReason string `json:"stopReason"`
	}
	c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}, &r)
	return r.StopReason
}

// TestACPSession drives harness acp as an editor would: a session whose
// cwd is the project (the process runs elsewhere), streamed text, a
// command in the sandbox, an edit with its diff, permission allow and
// reject, and a load that replays the conversation.
func TestACPSession(t *testing.T) {
	testenv.Slow(t)
	srv, proj := acpEnv(t)
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	c.waitUpdate("available_commands_update", 5*time.Second)
	c.takeUpdates()

	// Streaming text.
	srv.Enqueue(llmtest.Reply{Text: "hello from the fake", Thinking: ""})
	if stop := prompt(c, sid, "say hello"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	var text string
	for _, u := range ofKind(c.takeUpdates(), "agent_message_chunk") {
		text += u["content"].(map[string]any)["text"].(string)
	}
	if text != "hello from the fake" {
		t.Errorf("streamed text %q", text)
	}

	// A command: kind execute, pending → in_progress → completed, run in
	// the project (the session's cwd, not the process's).
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "b1", Name: "bash", Input: `{"command":"pwd"}`}}}, llmtest.Reply{Text: "done"})
	c.setPermission(func(map[string]any) string { return "allow_once" })
	if stop := prompt(c, sid, "where am I"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	us := c.takeUpdates()
	calls := ofKind(us, "tool_call")
	if len(calls) != 1 || calls[0]["kind"] != "execute" || calls[0]["status"] != "pending" || calls[0]["toolCallId"] != "b1" || calls[0]["title"] != "pwd" {
		t.Fatalf("tool_call: %v", calls)
	}
	var statuses []string
	var out string
	for _, u := range ofKind(us, "tool_call_update") {
		statuses = append(statuses, fmt.Sprint(u["status"]))
		if cs, ok := u["content"].([]any); ok {
			out += fmt.Sprint(cs)
		}
	}
	if statuses[len(statuses)-1] != "completed" || !containsStr(statuses, "in_progress") {
		t.Errorf("statuses %v", statuses)
	}
	if !strings.Contains(out, proj) {
		t.Errorf("pwd ran elsewhere than the project %s: %s", proj, out)
	}

	// An edit: kind edit, an absolute location, diff content.
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "edit_file", Input: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { println(1) }"}`}}}, llmtest.Reply{Text: "edited"})
	c.setPermission(func(map[string]any) string { return "allow_once" })
	if stop := prompt(c, sid, "edit"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	us = c.takeUpdates()
	calls = ofKind(us, "tool_call")
	if len(calls) != 1 || calls[0]["kind"] != "edit" {
		t.Fatalf("tool_call: %v", calls)
	}
	locs, _ := calls[0]["locations"].([]any)
	if len(locs) != 1 || locs[0].(map[string]any)["path"] != filepath.Join(proj, "main.go") {
		t.Errorf("locations %v", locs)
	}
	var diff map[string]any
	for _, u := range ofKind(us, "tool_call_update") {
		cs, _ := u["content"].([]any)
		for _, x := range cs {
			if m := x.(map[string]any); m["type"] == "diff" {
				diff = m
			}
		}
	}
	if diff == nil || diff["path"] != filepath.Join(proj, "main.go") || !strings.Contains(fmt.Sprint(diff["oldText"]), "func main() {}") || !strings.Contains(fmt.Sprint(diff["newText"]), "println(1)") {
		t.Errorf("diff content: %v", diff)
	}

	// A reject ends the turn: the second reply queued is never asked for,
	// and the file is not written.
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: "write_file", Input: `{"path":"rejected.txt","content":"no"}`}}}, llmtest.Reply{Text: "should not be asked"})
	c.mu.Lock()
	c.asked = nil
	c.mu.Unlock()
	c.setPermission(func(map[string]any) string { return "reject_once" })
	before := len(srv.Requests())
	if stop := prompt(c, sid, "write a file"); stop != "end_turn" {
		t.Fatalf("stopReason after a reject %q", stop)
	}
	if len(c.asked) != 1 {
		t.Fatalf("asked %d times, want 1", len(c.asked))
	}
	tc := c.asked[0]["toolCall"].(map[string]any)
	if tc["toolCallId"] != "w1" {
		t.Errorf("permission asked about %v, want the call w1", tc)
	}
	var kinds []string
	for _, o := range c.asked[0]["options"].([]any) {
		kinds = append(kinds, o.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "allow_once,allow_always,reject_once,reject_always" {
		t.Errorf("options %v", kinds)
	}
	if _, err := os.Stat(filepath.Join(proj, "rejected.txt")); err == nil {
		t.Errorf("a rejected write was made")
	}
	if n := len(srv.Requests()) - before; n != 1 {
		t.Errorf("the model was asked %d times after a reject, want 1 (the turn ends)", n)
	}
	if srv.Pending() != 1 {
		t.Errorf("%d replies pending, want the one the rejected turn never asked for", srv.Pending())
	}
	c.takeUpdates()

	// set_mode plan: the project turns read-only in the walls.
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)

	// Load: a second editor process replays the conversation.
	c.w.Close()
	<-c.done
	c.done <- nil
	c2 := startACP(t, proj)
	c2.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	c2.call("session/load", map[string]any{"sessionId": sid, "cwd": proj, "mcpServers": []any{}}, nil)
	us = c2.takeUpdates()
	var user, agentText string
	for _, u := range ofKind(us, "user_message_chunk") {
		user += u["content"].(map[string]any)["text"].(string) + "|"
	}
	for _, u := range ofKind(us, "agent_message_chunk") {
		agentText += u["content"].(map[string]any)["text"].(string) + "|"
	}
	if !strings.Contains(user, "say hello") || !strings.Contains(user, "where am I") || !strings.Contains(agentText, "hello from the fake") || !strings.Contains(agentText, "edited") {
		t.Errorf("replay: user %q agent %q", user, agentText)
	}
	if len(ofKind(us, "tool_call")) < 2 {
		t.Errorf("replay has %d tool calls", len(ofKind(us, "tool_call")))
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// sleepers lists the host's processes whose command line has marker.
func sleepers(t *testing.T, marker string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cl, marker) && !strings.Contains(cl, "bash -c") && strings.HasPrefix(cl, "sleep") {
			out = append(out, e.Name()+": "+cl)
		}
	}
	return out
}

// TestACPCancel: session/cancel kills the sandboxed command in flight
// (gone from the host), the prompt answers cancelled within 2 s, and the
// session takes the next prompt; a client that never answers a
// permission request does not hang the cancel either.
func TestACPCancel(t *testing.T) {
	srv, proj := acpEnv(t)
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	c.setPermission(func(map[string]any) string { return "allow_once" })

	const marker = "30.4242"
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "s1", Name: "bash", Input: `{"command":"sleep ` + marker + `"}`}}})
	id, ch := c.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "sleep"}}})
	for end := time.Now().Add(20 * time.Second); len(sleepers(t, marker)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the command never started")
		}
	}
	start := time.Now()
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	var r struct {
		StopReason string `json:"stopReason"`
	}
	c.wait(id, ch, 2*time.Second, &r)
	took := time.Since(start)
	if r.StopReason != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", r.StopReason)
	}
	t.Logf("cancel answered in %s", took)
	if left := sleepers(t, marker); len(left) > 0 {
		t.Errorf("the cancelled command is still running on the host: %v", left)
	}
	// The call is not left running in the editor.
	var last string
	for _, u := range ofKind(c.takeUpdates(), "tool_call_update") {
		if u["toolCallId"] == "s1" && u["status"] != nil {
			last = u["status"].(string)
		}
	}
	if last != "failed" {
		t.Errorf("the cancelled call's last status %q, want failed", last)
	}

	// The session goes on.
	srv.Enqueue(llmtest.Reply{Text: "after cancel"})
	if stop := prompt(c, sid, "again"); stop != "end_turn" {
		t.Fatalf("the prompt after a cancel: %q", stop)
	}

	// A client that never answers the permission request.
	c.mu.Lock()
	c.asked = nil
	c.mu.Unlock()
	c.setPermission(func(map[string]any) string { return "" })
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: "write_file", Input: `{"path":"asked.txt","content":"x"}`}}})
	id, ch = c.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "write"}}})
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		n := len(c.asked)
		c.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no permission request came")
		}
	}
	start = time.Now()
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	c.wait(id, ch, 2*time.Second, &r)
	if r.StopReason != "cancelled" {
		t.Errorf("stopReason %q after cancelling an unanswered permission request", r.StopReason)
	}
	t.Logf("cancel with a permission request unanswered answered in %s", time.Since(start))

	// A cancel read right after its prompt still cancels it: the turn is
	// in place before the next message is read.
	const marker2 = "30.4343"
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "s2", Name: "bash", Input: `{"command":"sleep ` + marker2 + `"}`}}})
	id, ch = c.start("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "sleep again"}}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	c.wait(id, ch, 2*time.Second, &r)
	if r.StopReason != "cancelled" {
		t.Errorf("a cancel right behind its prompt: stopReason %q", r.StopReason)
	}
	time.Sleep(200 * time.Millisecond)
	if left := sleepers(t, marker2); len(left) > 0 {
		t.Errorf("the command of a cancelled turn is running: %v", left)
	}

}

// TestACPWalls: the walls are the terminal's. An MCP server the editor
// passes runs inside them (its write outside the project fails, the file
// never appears on the host); plan mode set by the editor makes the
// project read-only in the kernel; allow_always is a session rule (asked
// once); todos become a plan.
func TestACPWalls(t *testing.T) {
	testenv.Slow(t)
	srv, proj := acpEnv(t)
	outside, err := os.MkdirTemp("/var/tmp", "harness-acp-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	// The server is this test binary, copied into the project: the
	// walls replace /tmp, where go test builds it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(proj, "bin", "mcp-test-server")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	c := startACP(t, proj)
	c.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	c.call("session/new", map[string]any{"cwd": proj, "mcpServers": []any{map[string]any{
		"name": "ed", "command": exe, "args": []string{}, "env": []any{map[string]any{"name": "HARNESS_MCP_TEST_SERVER", "value": "full"}},
	}}}, &ns)
	sid := ns.SessionID
	c.setPermission(func(map[string]any) string { return "allow_once" })

	// The editor's MCP server, inside the walls.
	escaped := filepath.Join(outside, "from-mcp")
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "m1", Name: "mcp_call", Input: `{"name":"mcp__ed__write","arguments":{"path":"` + escaped + `"}}`}}}, llmtest.Reply{Text: "ok"})
	inside := filepath.Join(proj, "from-mcp")
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "m2", Name: "mcp_call", Input: `{"name":"mcp__ed__write","arguments":{"path":"` + inside + `"}}`}}}, llmtest.Reply{Text: "ok"})
	prompt(c, sid, "write outside")
	prompt(c, sid, "write inside")
	if _, err := os.Stat(escaped); err == nil {
		t.Errorf("the editor's MCP server wrote outside the project: %s", escaped)
	}
	if b, err := os.ReadFile(inside); err != nil || string(b) != "mcp" {
		t.Errorf("the editor's MCP server did not run (inside write: %q, %v); updates: %v", b, err, c.takeUpdates())
	}
	c.takeUpdates()

	// allow_always: asked once for the same command.
	c.mu.Lock()
	c.asked = nil
	c.mu.Unlock()
	c.setPermission(func(map[string]any) string { return "allow_always" })
	for i := range 2 {
		srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("t%d", i), Name: "bash", Input: `{"command":"touch made.txt"}`}}}, llmtest.Reply{Text: "ok"})
		prompt(c, sid, "touch")
	}
	if len(c.asked) != 1 {
		t.Errorf("asked %d times for the same command after allow_always, want 1", len(c.asked))
	}
	if _, err := os.Stat(filepath.Join(proj, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	// Todos become a plan.
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "p1", Name: "write_todos", Input: `{"todos":[{"content":"read","activeForm":"reading","status":"completed"},{"content":"fix","activeForm":"fixing","status":"in_progress"}]}`}}}, llmtest.Reply{Text: "ok"})
	prompt(c, sid, "plan")
	plan := c.waitUpdate("plan", 5*time.Second)
	if es := plan["entries"].([]any); len(es) != 2 || es[1].(map[string]any)["status"] != "in_progress" {
		t.Errorf("plan %v", plan)
	}
	c.takeUpdates()

	// Plan mode: the project is read-only in the kernel, even for a
	// command the editor allows.
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	c.setPermission(func(map[string]any) string { return "allow_once" })
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "x1", Name: "bash", Input: `{"command":"echo x > planned.txt"}`}}}, llmtest.Reply{Text: "ok"})
	prompt(c, sid, "try to write")
	if _, err := os.Stat(filepath.Join(proj, "planned.txt")); err == nil {
		t.Errorf("a command wrote into the project in plan mode")
	}
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "default"}, nil)
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "x2", Name: "bash", Input: `{"command":"echo x > planned.txt"}`}}}, llmtest.Reply{Text: "ok"})
	prompt(c, sid, "write now")
	if _, err := os.Stat(filepath.Join(proj, "planned.txt")); err != nil {
		t.Errorf("back in default mode, the allowed command did not write: %v", err)
	}
}

// acpSDKVersion is the @agentclientprotocol/sdk .ci/run installs.
const acpSDKVersion = "2.4.0"

// TestACPWithOfficialSDK: the official TypeScript SDK, as the editor,
// drives harness acp against the fake model: streaming, kinds, a diff,
// permission allow and reject, cancel within 2 s with the command gone
// from the host, modes, and load with replay. The SDK validates every
// message harness sends against the schema.
func TestACPWithOfficialSDK(t *testing.T) {
	testenv.Slow(t)
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, testenv.ACPNpm, "no node in PATH")
	}
	dir := os.Getenv("HARNESS_ACP_NPM")
	pkg := filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")
	var meta struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(pkg, "package.json")); dir == "" || err != nil || json.Unmarshal(b, &meta) != nil || meta.Version != acpSDKVersion {
		testenv.Missing(t, testenv.ACPNpm, "HARNESS_ACP_NPM does not hold @agentclientprotocol/sdk@"+acpSDKVersion+" (npm install --prefix DIR @agentclientprotocol/sdk@"+acpSDKVersion+", as .ci/run does)")
	}
	script, err := filepath.Abs("testdata/acp/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	srv, proj := acpEnv(t)
	const marker = "30.5151"
	srv.Enqueue(
		llmtest.Reply{Text: "hello from the fake"},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "b1", Name: "bash", Input: `{"command":"echo hi"}`}}}, llmtest.Reply{Text: "ran"},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "edit_file", Input: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { println(1) }"}`}}}, llmtest.Reply{Text: "edited"},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: "write_file", Input: `{"path":"rejected.txt","content":"no"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "s1", Name: "bash", Input: `{"command":"sleep ` + marker + `"}`}}},
		llmtest.Reply{Text: "after cancel"},
		llmtest.Reply{Text: "after load"},
	)

	// OS pipes, so node holds its ends itself and its exit closes them:
	// harness sees the editor go away.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		err := runACP(context.Background(), &globalOptions{Backend: "auto"}, Stdio{In: inR, Out: outW, Err: &stderr})
		outW.Close()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "ACP_SDK=file://"+filepath.Join(pkg, "dist", "v1", "stable", "acp.js"), "ACP_PROJECT="+proj)
	cmd.Stdin, cmd.Stdout = outR, inW
	var nodeErr strings.Builder
	cmd.Stderr = &nodeErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inW.Close() // node's now
	outR.Close()
	runErr := cmd.Wait()
	t.Logf("the SDK client said:\n%s", nodeErr.String())
	if runErr != nil {
		t.Errorf("the SDK client: %v\nharness's stderr:\n%s", runErr, stderr.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("harness acp: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("harness acp did not end when the editor went away")
	}
	if left := sleepers(t, marker); len(left) > 0 {
		t.Errorf("the cancelled command is still running on the host: %v", left)
	}
	if _, err := os.Stat(filepath.Join(proj, "rejected.txt")); err == nil {
		t.Errorf("the rejected write was made")
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); !strings.Contains(string(b), "println(1)") {
		t.Errorf("the allowed edit is not on disk: %q", b)
	}
}

// TestACPPromptContent: an image in the prompt reaches the model as an
// image, an embedded resource as text.
func TestACPPromptContent(t *testing.T) {
	srv, proj := acpEnv(t)
	t.Setenv("MODEL", "claude-sonnet-4-5")
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	var png bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	if err := pngenc.Encode(&png, img); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Reply{Text: "seen"})
	var r struct {
		StopReason string `json:"stopReason"`
	}
	c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "what is this?"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(png.Bytes())},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + proj + "/notes.md", "mimeType": "text/markdown", "text": "RESOURCE-BODY-7731"}},
	}}, &r)
	if r.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", r.StopReason)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Images) != 1 || last.Images[0].Width != 40 {
		t.Errorf("images the model got: %+v", last.Images)
	}
	if b, _ := json.Marshal(last.Messages); !strings.Contains(string(b), "RESOURCE-BODY-7731") {
		t.Errorf("the embedded resource did not reach the model: %s", b)
	}
}
