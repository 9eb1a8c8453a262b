package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
)

// newEnv returns tools over a fresh project with the unsandboxed backend:
// these tests are about the tools, the sandbox has its own escape suite.
func newEnv(t *testing.T) (*Env, string) {
	t.Helper()
	home := t.TempDir()
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Sandbox: &sandbox.None{L: walls.NewLive(p)}}, p.Project()
}

func call(name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: name, Input: json.RawMessage(input)}
}

type panicky struct{}

func (panicky) Spec() llm.Tool                              { return llm.Tool{Name: "boom"} }
func (panicky) Access(json.RawMessage) (Access, error)      { return Access{Tool: "boom"}, nil }
func (panicky) Run(context.Context, json.RawMessage) Result { panic("kaboom") }

func TestRegistryBadCalls(t *testing.T) {
	env, _ := newEnv(t)
	deny := GateFunc(func(_ context.Context, a Access) (bool, string) {
		if a.Tool == "bash" && strings.Contains(a.Command, "forbidden") {
			return false, "not allowed: forbidden"
		}
		return true, ""
	})
	r := NewRegistry(deny, append(Builtins(env), panicky{})...)
	tests := []struct {
		name string
		call llm.Block
		want string
	}{
		{"unknown tool lists tools", call("nope", `{}`), "unknown tool \"nope\"; the tools that exist are: bash, boom, edit_file"},
		{"invalid json", call("bash", `{"command": "ls"`), "not valid JSON"},
		{"invalid json kept as a string by the adapter", call("bash", `"{\"command\": \"ls\""`), `not valid JSON ({"command": "ls")`},
		{"missing argument", call("bash", `{}`), `missing required argument "command"`},
		{"wrong type", call("read_file", `{"path": 3}`), "do not match the schema"},
		{"panic", call("boom", `{}`), "tool boom crashed: kaboom"},
		{"gate refuses", call("bash", `{"command":"echo forbidden"}`), "not allowed: forbidden"},
		{"empty input means {}", call("glob", ``), `missing required argument "pattern"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(context.Background(), tt.call)
			if !res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Errorf("got %+v, want error containing %q", res, tt.want)
			}
			if res.ToolUseID != "t1" || res.Type != llm.BlockToolResult {
				t.Errorf("result not tied to the call: %+v", res)
			}
			// The harness's own words on a malformed call are marked so
			// the history may fold their repeats; a crash or a refusal is
			// not a malformed call.
			malformed := !strings.Contains(tt.name, "panic") && !strings.Contains(tt.name, "gate")
			if got := res.Layer == llm.LayerFeedback; got != malformed {
				t.Errorf("marked as feedback %v, want %v", got, malformed)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	env, _ := newEnv(t)
	r := NewRegistry(GateFunc(allowAll), Builtins(env)...).Without("write_file", "edit_file")
	res := r.Run(context.Background(), call("write_file", `{"path":"x","content":"y"}`))
	if !res.IsError || !strings.Contains(res.Content, "unknown tool") {
		t.Fatalf("removed tool ran: %+v", res)
	}
	for _, s := range r.Specs() {
		if s.Name == "write_file" {
			t.Fatal("removed tool still advertised")
		}
	}
}

func run(t *testing.T, env *Env, name, input string) llm.Block {
	t.Helper()
	return NewRegistry(GateFunc(allowAll), Builtins(env)...).Run(context.Background(), call(name, input))
}

func TestBash(t *testing.T) {
	testenv.Slow(t)
	env, proj := newEnv(t)
	res := run(t, env, "bash", `{"command":"echo out; echo err >&2; pwd; exit 3"}`)
	want := "out\nerr\n" + proj + "\n[exit code: 3]"
	if res.Content != want || !res.IsError {
		t.Errorf("got %q, want %q", res.Content, want)
	}
	res = run(t, env, "bash", `{"command":"sleep 5","timeout":1}`)
	if !strings.Contains(res.Content, "timed out") || !strings.Contains(res.Content, "[exit code: 124]") {
		t.Errorf("timeout: %q", res.Content)
	}
}

func TestWriteReadEdit(t *testing.T) {
	env, proj := newEnv(t)
	steps := []struct {
		tool, input, want string
		isErr             bool
	}{
		{"write_file", `{"path":"a/b/c.txt","content":"one\ntwo\ntwo\n"}`, "created a/b/c.txt (12 bytes, 3 lines)", false},
		{"read_file", `{"path":"a/b/c.txt"}`, "     1\tone\n     2\ttwo\n     3\ttwo\n", false},
		{"read_file", `{"path":"a/b/c.txt","offset":2,"limit":1}`, "     2\ttwo\n[lines 2-2 of 3; continue with offset=3]\n", false},
		{"read_file", `{"path":"a/b/c.txt","offset":9}`, "offset 9 is past the end", true},
		{"edit_file", `{"path":"a/b/c.txt","old_string":"two","new_string":"2"}`, "occurs 2 times", true},
		{"edit_file", `{"path":"a/b/c.txt","old_string":"three","new_string":"3"}`, "was not found", true},
		{"edit_file", `{"path":"a/b/c.txt","old_string":"one","new_string":"one"}`, "the same", true},
		{"edit_file", `{"path":"a/b/c.txt","old_string":"two","new_string":"2","replace_all":true}`, "edited a/b/c.txt: 2 replacement(s)", false},
		{"read_file", `{"path":"a/b/c.txt"}`, "     1\tone\n     2\t2\n     3\t2\n", false},
		{"write_file", `{"path":"../outside.txt","content":"x"}`, "outside the writable roots", true},
		{"write_file", `{"path":"/etc/harness-test","content":"x"}`, "outside the writable roots", true},
		{"write_file", `{"path":".git/hooks/pre-commit","content":"x"}`, "read-only", true},
		{"read_file", `{"path":"a"}`, "is a directory", true},
		{"read_file", `{"path":"missing.txt"}`, "no such file", true},
	}
	for i, s := range steps {
		res := run(t, env, s.tool, s.input)
		if res.IsError != s.isErr || !strings.Contains(res.Content, s.want) {
			t.Fatalf("step %d %s %s: got %+v, want %q (error %v)", i, s.tool, s.input, res, s.want, s.isErr)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(proj), "outside.txt")); err == nil {
		t.Error("write outside the project happened")
	}
}

func TestReadRefusesBinaryAndSecrets(t *testing.T) {
	env, proj := newEnv(t)
	os.WriteFile(filepath.Join(proj, "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644)
	if res := run(t, env, "read_file", `{"path":"bin"}`); !res.IsError || !strings.Contains(res.Content, "binary") {
		t.Errorf("binary: %+v", res)
	}
	secret := env.Sandbox.Policy().DenyRead()[0]
	os.MkdirAll(secret, 0o700)
	os.WriteFile(filepath.Join(secret, "id_rsa"), []byte("KEY"), 0o600)
	res := run(t, env, "read_file", `{"path":"`+filepath.Join(secret, "id_rsa")+`"}`)
	if !res.IsError || strings.Contains(res.Content, "KEY") {
		t.Errorf("secret read: %+v", res)
	}
}

func TestWriteThroughSymlinkOutRefused(t *testing.T) {
	env, proj := newEnv(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	res := run(t, env, "write_file", `{"path":"link/x.txt","content":"x"}`)
	if !res.IsError {
		t.Fatalf("write through symlink allowed: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("file appeared outside the project")
	}
}

func TestGlobAndGrep(t *testing.T) {
	env, proj := newEnv(t)
	files := map[string]string{
		"main.go":              "package main\n// TODO fix\n",
		"internal/a/a.go":      "package a\nfunc A() {}\n",
		"internal/a/a_test.go": "package a\n// todo test\n",
		"README.md":            "todo: docs\n",
		".git/config":          "TODO hidden\n",
		"node_modules/x/y.go":  "TODO dep\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Join(proj, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(proj, p), []byte(c), 0o644)
	}
	tests := []struct {
		tool, input, want string
	}{
		{"glob", `{"pattern":"**/*.go"}`, "internal/a/a.go\ninternal/a/a_test.go\nmain.go"},
		{"glob", `{"pattern":"*.go"}`, "main.go"},
		{"glob", `{"pattern":"**/*_test.go","path":"internal"}`, "internal/a/a_test.go"},
		{"glob", `{"pattern":"*.{md,txt}"}`, "README.md"},
		{"grep", `{"pattern":"TODO"}`, "main.go:2: // TODO fix"},
		{"grep", `{"pattern":"todo","case_insensitive":true,"glob":"**/*.go"}`, "internal/a/a_test.go:2: // todo test\nmain.go:2: // TODO fix"},
		{"grep", `{"pattern":"nothing-here"}`, `no matches for "nothing-here"`},
	}
	for _, tt := range tests {
		res := run(t, env, tt.tool, tt.input)
		if res.Content != tt.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tt.tool, tt.input, res.Content, tt.want)
		}
	}
	if res := run(t, env, "grep", `{"pattern":"("}`); !res.IsError {
		t.Error("bad regexp accepted")
	}
}

func TestFileToolsReportWrites(t *testing.T) {
	env, proj := newEnv(t)
	var wrote []string
	env.Wrote = func(p string) { wrote = append(wrote, p) }
	run(t, env, "write_file", `{"path":"w.txt","content":"a"}`)
	run(t, env, "edit_file", `{"path":"w.txt","old_string":"a","new_string":"b"}`)
	run(t, env, "edit_file", `{"path":"w.txt","old_string":"zzz","new_string":"b"}`) // fails: no write
	want := []string{filepath.Join(proj, "w.txt"), filepath.Join(proj, "w.txt")}
	if strings.Join(wrote, ",") != strings.Join(want, ",") {
		t.Errorf("writes reported %v, want %v", wrote, want)
	}
}

// TestFileToolsRefuseNonRegular: devices, FIFOs, the harness's own
// descriptors and huge files are refused at once, never read or waited on.
func TestFileToolsRefuseNonRegular(t *testing.T) {
	env, proj := newEnv(t)
	fifo := filepath.Join(proj, "fifo")
	if err := syscallMkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	big := filepath.Join(proj, "big")
	f, _ := os.Create(big)
	f.Truncate(2 << 30)
	f.Close()
	os.Symlink("/dev/zero", filepath.Join(proj, "zero"))
	tests := []struct{ path, want string }{
		{"/dev/zero", "kernel or device view"},
		{"/dev/stdin", "magic link"},
		{"/dev/fd/0", "magic link"},
		{"fifo", "not a regular file"},
		{"zero", "kernel or device view"},
		{"big", "too large"},
		{".", "is a directory"},
	}
	for _, tt := range tests {
		out := run(t, env, "read_file", `{"path":"`+tt.path+`"}`)
		if !out.IsError || !strings.Contains(out.Content, tt.want) {
			t.Errorf("read_file %s: %q, want an error saying %q", tt.path, out.Content, tt.want)
		}
	}
	// grep over the project skips them all and finishes.
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("needle\n"), 0o644)
	if out := run(t, env, "grep", `{"pattern":"needle"}`); out.IsError || !strings.Contains(out.Content, "a.txt:1: needle") {
		t.Errorf("grep: %q", out.Content)
	}
	if out := run(t, env, "write_file", `{"path":"fifo","content":"x"}`); !out.IsError {
		t.Errorf("write_file over a FIFO: %q", out.Content)
	}
}

// allowAll is the gate of tests that check nothing.
func allowAll(context.Context, Access) (bool, string) { return true, "" }

// TestNilGateIsAConstructionError: a registry cannot be built without a
// gate, so no call can run unchecked by omission.
func TestNilGateIsAConstructionError(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewRegistry(nil) built a registry that checks nothing")
		}
	}()
	NewRegistry(nil)
}
