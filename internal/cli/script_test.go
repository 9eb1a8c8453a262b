package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

func TestMain(m *testing.M) {
	// The sandbox re-executes the running binary as its inner stage; in
	// tests that binary is this one.
	inner.RunHelperIfRequested()
	// The dev server the background-command tests start inside the walls.
	runDevServerIfAsked()
	// And the Go MCP server built with the SDK (mcptest), over stdio.
	mcptest.RunIfRequested()
	testscript.Main(m, map[string]func(){
		"harness": func() {
			os.Exit(Main(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
		},
	})
}

// TestScripts runs the CLI stories in testdata/script. Each script gets its
// own fake provider (both wire formats) and a private HOME; the llm command
// scripts the fake's replies and shows what it received.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			srv, err := llmtest.Listen("127.0.0.1:0")
			if err != nil {
				return err
			}
			env.Defer(srv.Close)
			env.Values["llm"] = srv
			// OUTSIDE is a fresh host directory outside the project and
			// outside /tmp (which the sandbox replaces), for the scripts
			// that check a write there is refused by the walls.
			outside, err := os.MkdirTemp("/var/tmp", "harness-script-outside-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(outside) })
			env.Setenv("OUTSIDE", outside)
			home := env.WorkDir + "/home"
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("XDG_CACHE_HOME", home+"/.cache")
			env.Setenv("BASE_URL", srv.URL)
			env.Setenv("LLMURL", srv.URL)
			env.Setenv("PROVIDER", "anthropic")
			env.Setenv("MODEL", "fake-model")
			env.Setenv("API_KEY", "sk-fake-key-for-tests-0123456789")
			env.Setenv("NO_COLOR", "1")
			// harness in a script is this test binary, built with -race
			// under CI: without this each run sleeps a second on exit
			// (the race runtime's default atexit_sleep_ms=1000, which
			// only gives goroutines still running time to race; a race
			// is reported when it happens and still fails the exit).
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// The Docker scripts find the engine and their image as the
			// developer or CI set them.
			for _, k := range []string{"HARNESS_TEST_IMAGE", "DOCKER_HOST"} {
				env.Setenv(k, os.Getenv(k))
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"llm":       cmdLLM,
			"origin":    cmdOrigin,
			"nouserns":  cmdNoUserns,
			"mkpng":     cmdMkPNG,
			"mcpserver": cmdMCPServer,
		},
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			// A condition that does not hold where HARNESS_REQUIRE names
			// it is an error, so the script fails instead of skipping.
			need := func(ok bool, feature, why string) (bool, error) {
				if !ok && testenv.Required(feature) {
					return false, fmt.Errorf("%s is required (%s) but unavailable: %s", feature, testenv.RequireEnv, why)
				}
				return ok, nil
			}
			switch cond {
			case "landlock":
				return need(inner.LandlockABI() > 0, testenv.Landlock, "this kernel has no Landlock")
			case "nouserns":
				// The nouserns command can run here.
				err := testenv.WithoutUsernsUnavailable()
				return need(err == nil, testenv.Userns, fmt.Sprint(err))
			case "bwrap":
				name, why := detectedBackend()
				return need(name == sandbox.BackendBwrap, testenv.Bwrap, why)
			case "gopls":
				// gopls on PATH: the language server of the diagnostics scripts.
				_, err := exec.LookPath("gopls")
				return need(err == nil, testenv.Gopls, "gopls is not on PATH (GOBIN=$HOME/go/bin go install golang.org/x/tools/gopls@v0.23.0)")
			case "docker":
				// A script that needs the engine skips without one, unless
				// HARNESS_REQUIRE names docker: then it is a failure.
				err := dockerReady()
				if err != nil && testenv.Required(testenv.Docker) {
					return false, fmt.Errorf("docker is required (%s) but unavailable: %v", testenv.RequireEnv, err)
				}
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// dockerReady says why the Docker scripts cannot run here, if they
// cannot: the engine must answer and HARNESS_TEST_IMAGE name an image it
// has (.ci/run builds one offline from Debian's packages).
func dockerReady() error {
	img := os.Getenv("HARNESS_TEST_IMAGE")
	if img == "" {
		return errors.New("HARNESS_TEST_IMAGE is not set")
	}
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker image inspect %s: %v: %s", img, err, strings.TrimSpace(string(out)))
	}
	return nil
}

var detectOnce = sync.OnceValues(sandbox.Detect)

// detectedBackend is sandbox.Detect, run once per test binary: bwrap
// counts only where it can build a sandbox, not merely when installed.
func detectedBackend() (string, string) { return detectOnce() }

// cmdOrigin starts a plain HTTP server on the host's loopback for the
// rest of the script, answering "origin NAME" to every request, and sets
// $ORIGIN_PORT to its port: a server a sandboxed command may reach
// through the proxy, given a rule naming localhost and that port.
//
//	origin NAME
func cmdOrigin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: origin NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin %s\n", args[0])
	})}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("ORIGIN_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

// cmdNoUserns runs a program as exec does (stdin, stdout, stderr, !), on
// what is, as far as the sandbox can tell, a machine without user
// namespaces (testenv.WithoutUserns); the nouserns condition says whether
// it can run here.
//
//	nouserns PROGRAM [ARGS...]
func cmdNoUserns(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: nouserns program [args...]")
	}
	argv := testenv.WithoutUserns(args...)
	err := ts.Exec(argv[0], argv[1:]...)
	switch {
	case err == nil && neg:
		ts.Fatalf("unexpected command success")
	case err != nil && !neg:
		ts.Fatalf("unexpected command failure: %v", err)
	}
}

// cmdLLM drives the fake provider:
//
//	llm text TEXT           queue a reply with text
//	llm tool NAME JSON      queue a reply calling one tool
//	llm queue FILE          queue replies, one llmtest.Reply JSON a line
//	llm requests N          assert the fake received N requests
//	llm request I           print request I (0-based): messages and reminder as JSON
//	llm body I              print request I's raw body
//	llm mode NAME...        emulate real servers' behaviours (llmtest.Mode names)
//	llm error NAME          queue a real server's error (llmtest.ErrorBodies names)
//	llm local KIND N ...    answer as Ollama's or llama.cpp's own API with an N-token context
//	llm agent               answer every request as a scripted agent (see scriptedAgent)
func cmdLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("llm does not support !")
	}
	if len(args) < 1 {
		ts.Fatalf("usage: llm text|tool|queue|requests|request|body|mode|error ...")
	}
	srv := ts.Value("llm").(*llmtest.Server)
	switch args[0] {
	case "text":
		srv.Enqueue(llmtest.Reply{Text: strings.Join(args[1:], " ")})
	case "tool":
		if len(args) != 3 {
			ts.Fatalf("usage: llm tool NAME JSON")
		}
		srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: args[1], Input: args[2]}}})
	case "queue":
		f, err := os.Open(ts.MkAbs(args[1]))
		ts.Check(err)
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var r llmtest.Reply
			ts.Check(json.Unmarshal(sc.Bytes(), &r))
			srv.Enqueue(r)
		}
	case "requests":
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		if got := len(srv.Requests()); got != n {
			ts.Fatalf("fake provider got %d requests, want %d", got, n)
		}
	case "request":
		i, err := strconv.Atoi(args[1])
		ts.Check(err)
		reqs := srv.Requests()
		if i >= len(reqs) {
			ts.Fatalf("request %d: only %d received", i, len(reqs))
		}
		enc := json.NewEncoder(ts.Stdout())
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		ts.Check(enc.Encode(struct {
			Path     string
			Model    string
			Tools    []string
			Messages any
			Reminder string
		}{reqs[i].Path, reqs[i].Model, reqs[i].Tools, reqs[i].Messages, reqs[i].Reminder}))
	case "images":
		// llm images I: the images request I carried, as the server saw them.
		i, err := strconv.Atoi(args[1])
		ts.Check(err)
		reqs := srv.Requests()
		if i >= len(reqs) {
			ts.Fatalf("request %d: only %d received", i, len(reqs))
		}
		for _, im := range reqs[i].Images {
			fmt.Fprintf(ts.Stdout(), "%s %dx%d %s\n", im.Where, im.Width, im.Height, im.MediaType)
		}
	case "body":
		// llm body I: print request I's raw body.
		i, err := strconv.Atoi(args[1])
		ts.Check(err)
		reqs := srv.Requests()
		if i >= len(reqs) {
			ts.Fatalf("request %d: only %d received", i, len(reqs))
		}
		ts.Stdout().Write(append(reqs[i].Body, '\n'))
	case "mode":
		// llm mode NAME...: emulate real servers' behaviours (llmtest.Mode).
		var modes []llmtest.Mode
		for _, a := range args[1:] {
			if !slices.Contains(llmtest.AllModes(), llmtest.Mode(a)) {
				ts.Fatalf("unknown mode %q; modes: %v", a, llmtest.AllModes())
			}
			modes = append(modes, llmtest.Mode(a))
		}
		srv.SetModes(modes...)
	case "local":
		// llm local KIND CONTEXT [TRAINED] [loaded] [params] [truncate]:
		// answer as Ollama's or llama.cpp's own API (llmtest.Local).
		if len(args) < 3 {
			ts.Fatalf("usage: llm local ollama|llamacpp CONTEXT [TRAINED] [loaded] [params] [truncate]")
		}
		l := llmtest.Local{Kind: args[1]}
		var err error
		l.Context, err = strconv.Atoi(args[2])
		ts.Check(err)
		for _, a := range args[3:] {
			switch a {
			case "loaded":
				l.Loaded = true
			case "params":
				l.InParameters = true
			case "truncate":
				l.Truncate = true
			default:
				l.Trained, err = strconv.Atoi(a)
				ts.Check(err)
			}
		}
		srv.SetLocal(l)
	case "error":
		// llm error NAME: queue a real server's error (llmtest.ErrorBodies).
		r, ok := llmtest.ServerError(args[1])
		if !ok {
			ts.Fatalf("unknown server error %q", args[1])
		}
		srv.Enqueue(r)
	case "agent":
		srv.Handle(scriptedAgent)
	default:
		ts.Fatalf("unknown llm subcommand %q", args[0])
	}
}

// scriptedAgent answers like a model that follows its prompt literally, so
// concurrent sessions on one fake server each get their own conversation
// (a queue would hand replies out in arrival order). The first user
// message is read as directives, one a line:
//
//	write PATH TEXT   the first reply writes TEXT (and a newline) to PATH
//	slow DURATION     every reply streams slowly (Delay per chunk)
//	hang FILE         while FILE exists, replies stall (an hour per chunk)
//	run CMD           the first reply also runs CMD with bash
//	needle WORD PATH TEXT  once results are in, if a tool result the
//	                  request shows holds WORD, write TEXT to PATH (so a
//	                  context layer that hides WORD fails the task)
//
// The first request gets the writes as write_file calls; once tool results
// are in, the reply is the text "done" (after the needle's write, if any). Every reply reports 1,000 input and
// 100 output tokens, so PRICE_* settings give each task a known cost.
func scriptedAgent(r llmtest.Request) llmtest.Reply {
	usage := llm.Usage{Input: 1000, Output: 100}
	if len(r.Messages) == 0 {
		return llmtest.Reply{Text: "no messages", Usage: usage}
	}
	var prompt string
	for _, b := range r.Messages[0].Blocks {
		if b.Type == llm.BlockText {
			prompt += b.Text + "\n"
		}
	}
	reply := llmtest.Reply{Usage: usage}
	var calls, needle []llmtest.ToolCall
	for _, line := range strings.Split(prompt, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "write":
			in, _ := json.Marshal(map[string]string{"path": f[1], "content": strings.Join(f[2:], " ") + "\n"})
			calls = append(calls, llmtest.ToolCall{Name: "write_file", Input: string(in)})
		case len(f) >= 2 && f[0] == "run":
			in, _ := json.Marshal(map[string]string{"command": strings.Join(f[1:], " ")})
			calls = append(calls, llmtest.ToolCall{Name: "bash", Input: string(in)})
		case len(f) >= 4 && f[0] == "needle" && requestShows(r, f[1]):
			in, _ := json.Marshal(map[string]string{"path": f[2], "content": strings.Join(f[3:], " ") + "\n"})
			needle = append(needle, llmtest.ToolCall{Name: "write_file", Input: string(in)})
		case len(f) == 2 && f[0] == "hang":
			if _, err := os.Stat(f[1]); err == nil {
				reply.Delay = time.Hour
			}
		case len(f) == 2 && f[0] == "slow":
			d, err := time.ParseDuration(f[1])
			if err == nil {
				reply.Delay = d
			}
		}
	}
	steps := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			steps++
		}
	}
	last := r.Messages[len(r.Messages)-1]
	answered := slices.ContainsFunc(last.Blocks, func(b llm.Block) bool { return b.Type == llm.BlockToolResult })
	switch {
	case answered && steps == 1 && len(needle) > 0:
		reply.ToolCalls = needle
	case answered || len(calls) == 0:
		reply.Text = "done"
	default:
		reply.ToolCalls = calls
	}
	return reply
}

// requestShows reports whether a tool result in r holds word.
func requestShows(r llmtest.Request, word string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == llm.BlockToolResult && strings.Contains(b.Content, word) {
				return true
			}
		}
	}
	return false
}

// cmdMCPServer copies this test binary to PATH, where (run with
// HARNESS_MCP_TEST_SERVER=KIND) it is the Go MCP server of mcptest: put in
// the project, the sandbox can run it (its /tmp, where testscript keeps
// its commands, is private).
func cmdMCPServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mcpserver PATH")
	}
	exe, err := os.Executable()
	ts.Check(err)
	raw, err := os.ReadFile(exe)
	ts.Check(err)
	dst := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, raw, 0o755))
}
