package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// scriptedSandbox runs no command: each Run prints what the test sends on
// its channel, until the context ends.
type scriptedSandbox struct{ out chan string }

func (s *scriptedSandbox) Run(ctx context.Context, c sandbox.Cmd) (*sandbox.Result, error) {
	for {
		select {
		case <-ctx.Done():
			return &sandbox.Result{ExitCode: 137}, nil
		case line := <-s.out:
			fmt.Fprint(c.Stdout, line)
			s.out <- "" // written
		}
	}
}
func (s *scriptedSandbox) Backend() string       { return "scripted" }
func (s *scriptedSandbox) Policy() *walls.Policy { return nil }
func (s *scriptedSandbox) Live() *walls.Live     { return nil }
func (s *scriptedSandbox) Close() error          { return nil }

func (s *scriptedSandbox) print(t *testing.T, text string) {
	t.Helper()
	s.out <- text
	select {
	case <-s.out:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not take the output")
	}
}

// TestBashOutputFilterAndTail: filter keeps the matching new lines, tail the
// last ones; what they leave out is read all the same and counted; the
// local URL a dev server printed (coloured, as Vite does) is named by
// bash_output and /ps's List.
func TestBashOutputFilterAndTail(t *testing.T) {
	sb := &scriptedSandbox{out: make(chan string)}
	jobs := &Jobs{Sandbox: sb}
	t.Cleanup(jobs.Close)
	if _, err := jobs.Start("npm run dev", false); err != nil {
		t.Fatal(err)
	}
	out := func(in map[string]any) Result {
		t.Helper()
		raw, _ := json.Marshal(in)
		return (&BashOutput{Jobs: jobs}).Run(context.Background(), raw)
	}
	sb.print(t, "  VITE v5.0.0  ready in 300 ms\n\n  \x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m\n")
	sb.print(t, "12:00:01 [vite] page reload src/App.tsx\n12:00:02 [vite] Internal server error: Unexpected token (3:4)\n")
	sb.print(t, "12:00:03 [vite] hmr update /src/App.tsx\n12:00:04 [vite] warning: unused import\n12:00:05 [vite] hmr update /src/main.tsx")

	b := out(map[string]any{"id": "job-1", "filter": "(?i)error|warn"})
	want := "[6 of 8 new lines did not match \"(?i)error|warn\" and are not shown]\n" +
		"12:00:02 [vite] Internal server error: Unexpected token (3:4)\n12:00:04 [vite] warning: unused import\n" +
		"[job-1 is running, for 0s; it printed http://localhost:5173/]"
	if b.IsError || b.Content != want {
		t.Errorf("filter:\n%s\nwant:\n%s", b.Content, want)
	}
	// What the filter left out was read: nothing new now.
	if b := out(map[string]any{"id": "job-1"}); b.Content != "[job-1 is running, for 0s; it printed http://localhost:5173/]" {
		t.Errorf("after a filtered read: %q", b.Content)
	}

	for i := 1; i <= 50; i++ {
		sb.print(t, fmt.Sprintf("line %d\n", i))
	}
	b = out(map[string]any{"id": "job-1", "tail": 3})
	if !strings.HasPrefix(b.Content, "[47 earlier lines not shown; the last 3 follow]\nline 48\nline 49\nline 50\n[job-1 is running") {
		t.Errorf("tail:\n%s", b.Content)
	}
	sb.print(t, "GET /a 200\nGET /b 404\nGET /c 404\nGET /d 500\n")
	b = out(map[string]any{"id": "job-1", "filter": ` [45]\d\d$`, "tail": 2})
	if !strings.HasPrefix(b.Content, "[1 of 4 new lines did not match \" [45]\\\\d\\\\d$\" and are not shown]\n[1 earlier lines not shown; the last 2 follow]\nGET /c 404\nGET /d 500\n") {
		t.Errorf("filter and tail:\n%s", b.Content)
	}
	if b := out(map[string]any{"id": "job-1", "filter": "("}); !b.IsError || !strings.Contains(b.Content, "not a regular expression") {
		t.Errorf("a bad filter: %+v", b)
	}
	l := jobs.List()
	if len(l) != 1 || l[0].URL != "http://localhost:5173/" || !l[0].Running {
		t.Errorf("list: %+v", l)
	}
}
