package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/tools"
)

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPromptsAndResourcesGo: the Go server's prompt is a command
// (mcp__go__review) whose arguments bind in order or by name, a missing
// required one says the usage; its resource reads as text; a prompt added
// at run time arrives through prompts/list_changed.
func TestPromptsAndResourcesGo(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	var mu sync.Mutex
	var notes []string
	m := start(t, sb, Options{Notify: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }}, f.goServer("go", "full"))

	p, ok := m.PromptByCommand("mcp__go__review")
	if !ok || p.Hint() != "<file>" || p.Description != "Review a file" {
		t.Fatalf("prompt: %+v %v (all: %+v)", p, ok, m.Prompts())
	}
	ctx := context.Background()
	if got, err := m.GetPrompt(ctx, p, "main.go"); err != nil || got != "Review main.go carefully." {
		t.Errorf("positional: %q %v", got, err)
	}
	if got, err := m.GetPrompt(ctx, p, `file="a b.go"`); err != nil || got != "Review a b.go carefully." {
		t.Errorf("by name, quoted: %q %v", got, err)
	}
	if _, err := m.GetPrompt(ctx, p, ""); err == nil || !strings.Contains(err.Error(), "/mcp__go__review <file>") {
		t.Errorf("missing argument: %v", err)
	}
	rs := m.Resources()
	if len(rs) != 1 || rs[0].Mention() != "@go:test://readme" {
		t.Fatalf("resources: %+v", rs)
	}
	if got, err := m.ReadResource(ctx, "go", "test://readme"); err != nil || got != "the readme" {
		t.Errorf("read: %q %v", got, err)
	}
	if _, err := m.ReadResource(ctx, "nosuch", "x://y"); err == nil || !strings.Contains(err.Error(), "no MCP server is named") {
		t.Errorf("unknown server: %v", err)
	}

	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__go__addprompt","arguments":{"text":"later"}}`); res.IsError {
		t.Fatalf("addprompt: %+v", res)
	}
	waitFor(t, "the added prompt", func() bool { _, ok := m.PromptByCommand("mcp__go__later"); return ok })
	if m.Changes("go", "prompts") == 0 {
		t.Errorf("no prompts/list_changed counted")
	}
	lp, _ := m.PromptByCommand("mcp__go__later")
	if got, err := m.GetPrompt(ctx, lp, ""); err != nil || got != "added prompt later" {
		t.Errorf("added prompt: %q %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(notes, "\n"), "MCP server go changed its prompts (now 3)") {
		t.Errorf("the user was not told: %q", notes)
	}
	st := m.Statuses()[0]
	if st.Tools == 0 || st.Prompts != 3 || st.Resources != 1 {
		t.Errorf("status counts: %+v", st)
	}
}

// TestUserCancel: a call the user interrupts (Esc, Ctrl-C: the turn's
// context ends) returns at once, and the server is told
// (notifications/cancelled): its handler's context ended, which it
// records in the project; the server goes on answering.
func TestUserCancel(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	m := start(t, sb, Options{}, f.goServer("go", "full"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	r := tools.NewRegistry(allowAll, m.Tools(true)...)
	began := time.Now()
	res := r.Run(ctx, llm.Block{Type: llm.BlockToolUse, ID: "c", Name: "mcp_call", Input: json.RawMessage(`{"name":"mcp__go__hang"}`)})
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the interrupted call took %s", took)
	}
	if !res.IsError || !strings.Contains(res.Content, "cancelled by the user") {
		t.Errorf("result: %+v", res)
	}
	waitFor(t, "the server to record the cancellation", func() bool {
		_, err := os.Stat(filepath.Join(f.proj, "cancelled.txt"))
		return err == nil
	})
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__go__echo","arguments":{"text":"still here"}}`); res.Content != "echo: still here" {
		t.Errorf("after the cancel: %+v", res)
	}
}

func TestBindArgs(t *testing.T) {
	p := Prompt{Command: "mcp__s__p", Args: []PromptArg{{Name: "city", Required: true}, {Name: "state"}}}
	for _, c := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"Paris", map[string]string{"city": "Paris"}, ""},
		{"Austin TX", map[string]string{"city": "Austin", "state": "TX"}, ""},
		{`"New York" NY`, map[string]string{"city": "New York", "state": "NY"}, ""},
		{"state=CA city=Fresno", map[string]string{"city": "Fresno", "state": "CA"}, ""},
		{"state=CA", nil, "needs city"},
		{"Austin Texas USA", map[string]string{"city": "Austin", "state": "Texas USA"}, ""},
	} {
		got, err := bindArgs(p, splitWords(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.in, got, err)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %s=%q, want %q", c.in, k, got[k], v)
			}
		}
	}
	if _, err := bindArgs(Prompt{Command: "mcp__s__q"}, []string{"x"}); err == nil {
		t.Errorf("a prompt without arguments took one")
	}
}

// TestResourceSubscriptions: a resource read is subscribed to; when the
// server says it changed, the user is told at once and the model with
// the next answer of an MCP tool, once; a resource not read is not
// followed.
func TestResourceSubscriptions(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	var mu sync.Mutex
	var notes []string
	m := start(t, sb, Options{Notify: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }}, f.goServer("go", "full"))
	if _, err := m.ReadResource(context.Background(), "go", "test://readme"); err != nil {
		t.Fatal(err)
	}
	ts := m.Tools(true)
	waitFor(t, "the subscription", func() bool {
		c := m.conn("go")
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.subscribed["test://readme"] // the server said yes
	})
	run(t, ts, "mcp_call", `{"name":"mcp__go__touch","arguments":{"text":"test://other"}}`) // never read
	touched := run(t, ts, "mcp_call", `{"name":"mcp__go__touch","arguments":{"text":"test://readme"}}`)
	if touched.IsError {
		t.Fatalf("touch: %+v", touched)
	}
	waitFor(t, "the user told", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(notes, "\n"), "MCP server go: resource test://readme changed since it was read")
	})
	// The model is told with the next answer: the touch's own, when the
	// notification came before it, else the echo's; and only once.
	echo := run(t, ts, "mcp_call", `{"name":"mcp__go__echo","arguments":{"text":"hi"}}`)
	again := run(t, ts, "mcp_call", `{"name":"mcp__go__echo","arguments":{"text":"again"}}`)
	told := 0
	for _, r := range []string{touched.Content, echo.Content, again.Content} {
		if strings.Contains(r, "MCP resources changed since they were read: @go:test://readme;") {
			told++
		}
		if strings.Contains(r, "test://other") {
			t.Errorf("a resource never read is named: %q", r)
		}
	}
	if told != 1 || strings.Contains(again.Content, "changed since") {
		t.Errorf("the model was told %d times (want once, before the last answer): %q / %q / %q", told, touched.Content, echo.Content, again.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(strings.Join(notes, "\n"), "test://other") {
		t.Errorf("a resource never read was followed: %q", notes)
	}
}
