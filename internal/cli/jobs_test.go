package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestChatPs: the model starts a command in the background, /ps lists it,
// /ps stop ends it, and /ps shows it ended.
func TestChatPs(t *testing.T) {
	testenv.Slow(t)
	srv, _ := chatEnv(t, "anthropic", "claude-haiku-4-5")
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".agents"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agents", "permissions"), []byte("allow bash sleep *\n"), 0o644)
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo '  Local:   http://localhost:5173/'; exec sleep 271828","background":true}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"sleep 314159","background":true}`}}},
		llmtest.Reply{Text: "Started them."},
	)
	in := strings.Join([]string{"start the watcher", "/ps", "/ps stop job-1", "/ps", "/exit"}, "\n") + "\n"
	got, _ := chatPiped(t, proj, in)
	for _, re := range []string{
		`job-1 +running \d+s +echo .*; exec sleep 271828\n +http://localhost:5173/ \(inside the sandbox\)`,
		`job-2 +running \d+s +sleep 314159`,
		`job-1 was stopped: it and every process it started were killed`,
		`job-1 +exited \d+ after \d+s +echo`,
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("missing %q in:\n%s", re, got)
		}
	}
	// The one left running ended with the session, on the host too.
	if procs := hostSleeps("314159"); len(procs) > 0 {
		t.Errorf("a background command outlived the session: %v", procs)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), "started in the background as job-1") {
		t.Errorf("the model was not told the job id")
	}
}

// hostSleeps lists the host's processes running sleep ARG.
func hostSleeps(arg string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(cmd) == "sleep\x00"+arg+"\x00" {
			out = append(out, e.Name())
		}
	}
	return out
}

// devServerRole makes the test binary a dev server: BIN MARKER PORT serves
// HTTP on 127.0.0.1:PORT and logs each request; MARKER lets the host find
// it in /proc.
const devServerRole = "HARNESS_CLI_TEST_DEVSERVER"

func runDevServerIfAsked() {
	switch os.Getenv(devServerRole) {
	case "":
		return
	case "get":
		// BIN URL: a client (curl is denied by the default rules) that
		// retries for 30 s while the server comes up.
		for i := 0; ; i++ {
			resp, err := http.Get(os.Args[1])
			if err == nil {
				io.Copy(os.Stdout, resp.Body)
				os.Exit(0)
			}
			if i == 300 {
				fmt.Println(err)
				os.Exit(1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	port := os.Args[2]
	fmt.Println("dev server ready on http://localhost:" + port + "/")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("GET", r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintln(w, "<html><body><h1>hello from the dev server</h1><p>path "+r.URL.Path+"</p></body></html>")
	})
	fmt.Println(http.ListenAndServe("127.0.0.1:"+port, nil))
	os.Exit(1)
}
