//go:build unix

package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// fakeEnv makes the test binary a fake language server (TestMain); its
// value is the behaviour (runFake).
const fakeEnv = "HARNESS_FAKE_LSP"

func TestMain(m *testing.M) {
	// The sandbox re-executes the running binary as its inner stage.
	inner.RunHelperIfRequested()
	if mode := os.Getenv(fakeEnv); mode != "" {
		runFake(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runFake is a language server that reports an error on every line with
// ERROR and a warning on every line with WARN, in the file's own version,
// and an error in other.go when the text has BREAKOTHER. Modes:
//
//	ok        as above
//	noinit    never answers initialize
//	silent    never publishes
//	crash     exits 3 on the first didOpen, saying why on stderr
//	garbage   breaks the framing on the first didOpen
//	stale     publishes an older version's errors first
//	noversion publishes without a version
//	twostep   publishes nothing wrong, then 100 ms later the errors
func runFake(mode string) {
	if f := os.Getenv("HARNESS_FAKE_LSP_PIDFILE"); f != "" {
		os.WriteFile(f, []byte(fmt.Sprint(os.Getpid())), 0o644)
	}
	r := bufio.NewReader(os.Stdin)
	out := &fakeOut{}
	texts := map[string]string{}
	for {
		body, err := readMessage(r)
		if err != nil {
			os.Exit(0)
		}
		var m wireMsg
		if json.Unmarshal(body, &m) != nil {
			os.Exit(2)
		}
		switch m.Method {
		case "initialize":
			if mode == "noinit" {
				continue
			}
			out.send(wireMsg{ID: m.ID, Result: json.RawMessage(`{"capabilities":{"textDocumentSync":1}}`)})
		case "initialized":
			// Ask as gopls does: the answer must be one entry per item.
			out.send(wireMsg{ID: json.RawMessage(`"cfg"`), Method: "workspace/configuration", Params: json.RawMessage(`{"items":[{"section":"fake"}]}`)})
		case "shutdown":
			out.send(wireMsg{ID: m.ID, Result: json.RawMessage(`null`)})
		case "exit":
			os.Exit(0)
		case "textDocument/didOpen", "textDocument/didChange":
			var p struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
					Text    string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			}
			json.Unmarshal(m.Params, &p)
			uri, v := p.TextDocument.URI, p.TextDocument.Version
			texts[uri] = p.TextDocument.Text
			if len(p.ContentChanges) > 0 {
				texts[uri] = p.ContentChanges[len(p.ContentChanges)-1].Text
			}
			switch mode {
			case "silent":
				continue
			case "crash":
				fmt.Fprintln(os.Stderr, "fake: cannot go on")
				os.Exit(3)
			case "garbage":
				os.Stdout.WriteString("Content-Length: many\r\n\r\n{}")
				continue
			case "stale":
				old := v - 1
				out.publish(uri, &old, []diagnostic{{Message: "stale error", Severity: severityError}})
			case "twostep":
				out.publish(uri, &v, nil)
				time.Sleep(100 * time.Millisecond)
			}
			ver := &v
			if mode == "noversion" {
				ver = nil
			}
			out.publish(uri, ver, fakeDiags(texts[uri]))
			if strings.Contains(texts[uri], "BREAKOTHER") {
				otherURI := uri[:strings.LastIndex(uri, "/")+1] + "other.go"
				out.publish(otherURI, nil, []diagnostic{{Range: lspRange{Start: position{Line: 2, Character: 4}}, Message: "undefined: gone"}})
			}
		}
		if m.Method == "" && string(m.ID) == `"cfg"` && string(m.Result) != "[null]" {
			fmt.Fprintf(os.Stderr, "fake: configuration answered %s\n", m.Result)
			os.Exit(4)
		}
	}
}

func fakeDiags(text string) []diagnostic {
	var ds []diagnostic
	for i, l := range strings.Split(text, "\n") {
		for _, w := range []struct {
			word string
			sev  int
		}{{"ERROR", severityError}, {"WARN", severityWarning}} {
			if b := strings.Index(l, w.word); b >= 0 {
				// The column in UTF-16 units, as LSP counts.
				col := len([]rune(l[:b])) + strings.Count(l[:b], "😀")
				ds = append(ds, diagnostic{Range: lspRange{Start: position{Line: i, Character: col}}, Severity: w.sev, Message: "found " + w.word + "\nsecond line"})
			}
		}
	}
	return ds
}

type fakeOut struct{}

func (fakeOut) send(m wireMsg) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	writeMessage(os.Stdout, b)
}

func (o fakeOut) publish(uri string, v *int, ds []diagnostic) {
	if ds == nil {
		ds = []diagnostic{}
	}
	p, _ := json.Marshal(publishDiagnosticsParams{URI: uri, Version: v, Diagnostics: ds})
	o.send(wireMsg{Method: "textDocument/publishDiagnostics", Params: p})
}

// hostSandbox runs commands directly, with the pipes a real sandbox
// passes: the unit tests exercise the protocol, the walls are the
// testscript's (internal/cli/testdata/script/lsp_gopls.txt).
type hostSandbox struct{ runs atomic.Int32 }

func (h *hostSandbox) Run(ctx context.Context, c sandbox.Cmd) (*sandbox.Result, error) {
	h.runs.Add(1)
	cmd := exec.Command("/bin/sh", "-c", c.Script)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Dir, c.Stdin, c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	res := &sandbox.Result{}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	}
	return res, nil
}

func (h *hostSandbox) Backend() string       { return "test" }
func (h *hostSandbox) Policy() *walls.Policy { return nil }
func (h *hostSandbox) Live() *walls.Live     { return nil }
func (h *hostSandbox) Close() error          { return nil }
