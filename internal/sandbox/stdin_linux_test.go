package sandbox

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/shellquote"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestRunStdin: a command given Cmd.Stdin reads it (a server speaking over
// pipes, as MCP's stdio servers do), behind the same walls: a write
// outside the project still fails.
func TestRunStdin(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range []string{BackendNone, BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			sb, _ := openTest(t, backend, nil)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				w.WriteString("ping\n")
				w.Close()
			}()
			var out bytes.Buffer
			script := "read x; echo \"got:$x\"; touch " + shellquote.Quote(outsideBase()+"/harness-stdin-probe") + " 2>/dev/null && echo escaped"
			res, err := sb.Run(context.Background(), Cmd{Script: script, Stdin: r, Stdout: &out, Stderr: &out})
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(outsideBase() + "/harness-stdin-probe")
			if res.ExitCode != 0 && backend == BackendNone || !strings.Contains(out.String(), "got:ping") {
				t.Errorf("exit %d, output %q: want got:ping", res.ExitCode, out.String())
			}
			if backend != BackendNone && strings.Contains(out.String(), "escaped") {
				t.Errorf("a command with stdin wrote outside the project: %q", out.String())
			}
		})
	}
}
