package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestSpillFileReadableInSandbox: a capped tool result names a spill file,
// and the model can page it with bash inside the real sandbox (and with
// read_file on the host), as the marker says. HOME is outside /tmp here,
// as on a user's machine: the sandbox's /tmp is private.
func TestSpillFileReadableInSandbox(t *testing.T) {
	if name, why := detectedBackend(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, why)
	}
	home, err := os.MkdirTemp("/var/tmp", "harness-home-")
	if err != nil {
		t.Skipf("no writable /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	srv := llmtest.NewServer(t)
	t.Setenv("BASE_URL", srv.URL)
	t.Setenv("PROVIDER", "anthropic")
	t.Setenv("MODEL", "m")
	t.Setenv("API_KEY", "sk-fake-key-for-tests-0123456789")

	var spill string
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 30000"}`}}})
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		// Answer the capped result by paging its spill file, as a model
		// would from the marker, first with bash, then with read_file.
		last := req.Messages[len(req.Messages)-1]
		for _, b := range last.Blocks {
			if i := strings.Index(b.Content, "The whole output is in "); i >= 0 && spill == "" {
				rest := b.Content[i+len("The whole output is in "):]
				spill = rest[:strings.Index(rest, ":")]
				cmd, _ := json.Marshal(map[string]string{"command": "sed -n 30000p " + spill})
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: string(cmd)}}}
			}
			if strings.Contains(b.Content, "30000\n[exit code: 0]") {
				in, _ := json.Marshal(map[string]any{"path": spill, "offset": 29999})
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: string(in)}}}
			}
			if strings.Contains(b.Content, "30000\t30000") {
				return llmtest.Reply{Text: "paged both ways"}
			}
		}
		b, _ := json.Marshal(last)
		return llmtest.Reply{Text: "lost: " + string(b)}
	})
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"run", "--yolo", "--project", proj, "count"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 || strings.TrimSpace(out.String()) != "paged both ways" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out.String(), errOut.String())
	}
	if _, err := os.Stat(spill); err == nil {
		t.Errorf("spill file %s still there after the turn", spill)
	}
}
