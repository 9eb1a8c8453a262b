package cli

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInitsAreLight: every process start runs every linked package's init
// before main, the sandbox's re-execs of the binary (helper, launcher,
// supervisor, container init) included. harness's own packages keep that
// light: a regexp, table or map that needs building is built on first use
// (sync.OnceValue), not at init. This re-runs the test binary, which links
// what the harness binary links, with Go's init trace and holds each
// package's init to a few kilobytes of allocations (fixed work, so no
// timing). Test-only helpers are not in the harness binary and are left
// out.
func TestInitsAreLight(t *testing.T) {
	const limit = 16 << 10
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/harness-dev/harness/\S+) @.* ms clock, (\d+) bytes, (\d+) allocs$`)
	seen := 0
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		pkg := m[1]
		if strings.Contains(pkg, "llmtest") || strings.Contains(pkg, "mcptest") || strings.Contains(pkg, "testenv") {
			continue
		}
		seen++
		if b, _ := strconv.Atoi(m[2]); b > limit {
			t.Errorf("%s allocates %d bytes (%s allocations) at init, over %d: build it on first use", pkg, b, m[3], limit)
		}
	}
	if seen < 5 {
		t.Fatalf("the init trace named %d harness packages; the trace's format may have changed:\n%s", seen, out)
	}
}
