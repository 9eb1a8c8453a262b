package mcp

import (
	"encoding/json"
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
		"BRAVE_API_KEY": "brave", "JIRA_TOKEN": "jira", "HTTPS_PROXY": "http://proxy:3128"}
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

// TestOtherToolsUserFileCommandsCanWrite: a user-level file of another
// tool (here ~/.cursor/mcp.json) that commands can write where it really
// is (a link into the project) is the project's: its server needs the
// user's approval, as a hostile repository would otherwise plant a server
// that runs unasked.
func TestOtherToolsUserFileCommandsCanWrite(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	for _, f := range []string{".cursor/mcp.json", ".codex/config.toml", ".gemini/settings.json", ".config/opencode/opencode.json", ".config/crush/crush.json"} {
		path := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(home, ".cursor/mcp.json"):               `{"mcpServers": {"a": {"command": "planted"}}}`,
		filepath.Join(home, ".codex/config.toml"):             "[mcp_servers.b]\ncommand = \"planted\"\n",
		filepath.Join(home, ".gemini/settings.json"):          `{"mcpServers": {"c": {"command": "planted"}}}`,
		filepath.Join(home, ".config/opencode/opencode.json"): `{"mcp": {"d": {"type": "local", "command": ["planted"]}}}`,
		filepath.Join(home, ".config/crush/crush.json"):       `{"mcp": {"e": {"type": "stdio", "command": "planted"}}}`,
	}
	read := func(path string) ([]byte, bool, error) {
		data, ok := files[path]
		if !ok {
			return nil, false, os.ErrNotExist
		}
		return []byte(data), true, nil // every one resolves where commands write
	}
	servers, warns, err := LoadWith(home, project, nil, read)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %v", warns)
	}
	if len(servers) != len(files) {
		t.Fatalf("got %d servers, want %d", len(servers), len(files))
	}
	for _, s := range servers {
		if s.Scope != ScopeProject {
			t.Errorf("server %s from %s: scope %s, want project (commands can write its file)", s.Name, s.File, s.Scope)
		}
	}
}

// TestOneBadEntry: a file with one unusable server keeps its others, and
// the message names the file, the server and the field.
func TestOneBadEntry(t *testing.T) {
	project := t.TempDir()
	data := `{"mcpServers": {
		"good": {"command": "good-mcp"},
		"bad": {"command": "bad-mcp", "env": {"PORT": 3000}},
		"also": {"type": "http", "url": "https://example.com/mcp"}}}`
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	servers, warns, err := Load(t.TempDir(), project, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "also,good" {
		t.Errorf("servers %v, want also and good", names)
	}
	if len(warns) != 1 {
		t.Fatalf("warnings %v, want one", warns)
	}
	msg := warns[0].Error()
	for _, want := range []string{filepath.Join(project, ".mcp.json"), "server bad", "field env", "PORT"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
}

func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1, // one` + "\n" + `}`, `{"a": 1 ` + "\n" + `}`},
		{`{"url": "http://x//y", /* c */ "b": [1,2,],}`, `{"url": "http://x//y", "b": [1,2]}`},
		{`{"s": "a \" // not a comment", }`, `{"s": "a \" // not a comment"}`},
		{`["x,]", ]`, `["x,]"]`},
	} {
		var got, want any
		if err := json.Unmarshal(stripJSONC([]byte(tc.in)), &got); err != nil {
			t.Errorf("%s: %v (stripped: %s)", tc.in, err, stripJSONC([]byte(tc.in)))
			continue
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", tc.in, got, want)
		}
	}
}
