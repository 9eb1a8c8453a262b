package mcp

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/configs/*/want.txt")

// TestConfigCorpus reads each directory of testdata/configs as a home
// (home/) and a project (project/) with the files where their tools keep
// them, and compares what harness understood with want.txt: every
// server's transport, command, args, env, cwd, url and headers (expanded
// with a fixed environment), whether it is off and why, the fields it
// ignores, and the message for each entry skipped.
func TestConfigCorpus(t *testing.T) {
	dirs, err := os.ReadDir("testdata/configs")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		t.Run(d.Name(), func(t *testing.T) {
			dir, _ := filepath.Abs(filepath.Join("testdata/configs", d.Name()))
			got := dumpLoad(t, dir)
			wantFile := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("understood differently:\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

func dumpLoad(t *testing.T, dir string) string {
	t.Helper()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	servers, warns, err := Load(home, project, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": "/home/u", "GITHUB_TOKEN": "ghp", "CONTEXT7_API_KEY": "c7", "PG_URL": "postgres://pg",
		"FIGMA_OAUTH_TOKEN": "fig", "GH_PAT": "pat", "DB_CONNECTION_STRING": "db", "EXTERNAL_API_KEY": "ext", "MY_TOKEN": "tok",
		"BRAVE_API_KEY": "brave", "JIRA_TOKEN": "jira"}
	rel := func(s string) string { return strings.ReplaceAll(s, dir, "$DIR") }
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "%s: %s, %s, %s\n", s.Name, s.Scope, s.Format, rel(s.File))
		e, err := s.Expand(func(k string) string { return env[k] })
		if err != nil {
			fmt.Fprintf(&b, "  expand: %s\n", rel(err.Error()))
			e = s
		}
		fmt.Fprintf(&b, "  transport: %s\n", e.Transport())
		if e.Transport() == "stdio" {
			fmt.Fprintf(&b, "  command: %q\n", rel(e.Command))
			if len(e.Args) > 0 {
				fmt.Fprintf(&b, "  args: %q\n", relAll(e.Args, rel))
			}
			for _, k := range sortedKeys(e.Env) {
				fmt.Fprintf(&b, "  env: %s=%s\n", k, rel(e.Env[k]))
			}
		} else {
			fmt.Fprintf(&b, "  url: %s\n", e.URL)
			for _, k := range sortedKeys(e.Headers) {
				fmt.Fprintf(&b, "  header: %s: %s\n", k, e.Headers[k])
			}
		}
		if e.Cwd != "" {
			fmt.Fprintf(&b, "  cwd: %s\n", rel(e.Cwd))
		}
		if s.Off != "" {
			fmt.Fprintf(&b, "  off: %s\n", rel(s.Off))
		}
		for _, ig := range s.Ignored {
			fmt.Fprintf(&b, "  ignored: %s\n", ig)
		}
	}
	var ws []string
	for _, w := range warns {
		var ee *EntryError
		if errors.As(w, &ee) {
			ws = append(ws, "skipped: "+rel(w.Error()))
		} else if !strings.Contains(w.Error(), "not supported, ignored") {
			ws = append(ws, "warning: "+rel(w.Error()))
		}
	}
	sort.Strings(ws)
	for _, w := range ws {
		b.WriteString(w + "\n")
	}
	return b.String()
}

func relAll(l []string, rel func(string) string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = rel(s)
	}
	return out
}
