// Command fakellm serves llmtest's fake provider as a separate process, for
// end-to-end scripts (testscript, tmux): it reads a JSON-lines script of
// llmtest.Reply values, listens on loopback, prints its base URL on stdout
// and serves the replies in order until killed. "delay" may be given as a
// duration string ("50ms"). With -log, each request's decoded view is
// appended to that file as a JSON line.
//
//	fakellm -script replies.jsonl [-addr 127.0.0.1:0] [-log requests.jsonl]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// line is a script line: a Reply whose delay may be a duration string.
type line struct {
	llmtest.Reply
	Delay json.RawMessage `json:"delay,omitempty"`
}

func main() {
	script := flag.String("script", "", "JSON-lines file of replies (empty: always the default reply)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	logPath := flag.String("log", "", "append each request as a JSON line to this file")
	modes := flag.String("modes", "", "comma-separated server behaviours to emulate, of: "+modeList())
	flag.Parse()
	if err := run(*script, *addr, *logPath, *modes); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

func modeList() string {
	var names []string
	for _, m := range llmtest.AllModes() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

func run(script, addr, logPath, modes string) error {
	replies, err := readScript(script)
	if err != nil {
		return err
	}
	var ms []llmtest.Mode
	for _, m := range strings.Split(modes, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		if !slices.Contains(llmtest.AllModes(), llmtest.Mode(m)) {
			return fmt.Errorf("unknown mode %q: use %s", m, modeList())
		}
		ms = append(ms, llmtest.Mode(m))
	}
	srv, err := llmtest.Listen(addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.SetModes(ms...)
	srv.Enqueue(replies...)
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		var mu sync.Mutex
		enc := json.NewEncoder(f)
		srv.Observe(func(r llmtest.Request) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(map[string]any{"path": r.Path, "model": r.Model, "system": r.System, "tools": r.Tools,
				"messages": r.Messages, "reminder": r.Reminder})
		})
	}
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return nil
}

func readScript(path string) ([]llmtest.Reply, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []llmtest.Reply
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if len(l.Delay) > 0 {
			var s string
			if json.Unmarshal(l.Delay, &s) == nil {
				d, err := time.ParseDuration(s)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: delay: %w", path, n, err)
				}
				l.Reply.Delay = d
			} else if err := json.Unmarshal(l.Delay, &l.Reply.Delay); err != nil {
				return nil, fmt.Errorf("%s:%d: delay: %w", path, n, err)
			}
		}
		out = append(out, l.Reply)
	}
	return out, sc.Err()
}
