package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestPlanModeReadOnly: while the project is read-only (plan mode), every
// command runs under the read-only walls though it did not ask for them,
// and the file tools' writes are refused; reads and /tmp still work, and
// turning it off writes again. Asserted on the host.
func TestPlanModeReadOnly(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, variant := range allBackends {
		t.Run(variant, func(t *testing.T) {
			sb, proj := openTest(t, variant, nil)
			pol := sb.Live()
			keep := filepath.Join(proj, "keep.txt")
			os.WriteFile(keep, []byte("alpha\n"), 0o644)
			ctx := context.Background()
			pol.SetProjectReadOnly(true)
			script := "cat keep.txt; grep -c alpha keep.txt; echo evil > keep.txt; sed -i s/alpha/beta/ keep.txt; " +
				"touch new.txt; mkdir -p cache/x; echo evil >> .git/config; echo tmp-ok > /tmp/p && cat /tmp/p"
			r, err := sb.Run(ctx, Cmd{Script: script})
			if variant == BackendNone {
				if !errors.Is(err, ErrNoReadOnly) {
					t.Fatalf("the none backend ran a command in plan mode: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(r.Output, []byte("alpha\n1\n")) || !bytes.Contains(r.Output, []byte("tmp-ok")) {
					t.Errorf("plan mode could not read the project or write /tmp: %s", r.Output)
				}
			}
			if _, err := pol.WriteFile(keep, []byte("evil")); err == nil {
				t.Error("the file tools wrote the project in plan mode")
			}
			if content(keep) != "alpha\n" || exists(filepath.Join(proj, "new.txt")) || exists(filepath.Join(proj, "cache")) || content(filepath.Join(proj, ".git", "config")) != "[core]\n" {
				t.Fatalf("plan mode changed the project (output: %s)", r.Output)
			}
			pol.SetProjectReadOnly(false)
			if _, err := pol.WriteFile(keep, []byte("tool\n")); err != nil || content(keep) != "tool\n" {
				t.Errorf("the file tools no longer write after plan mode: %v", err)
			}
			if variant == BackendNone {
				return
			}
			r, err = sb.Run(ctx, Cmd{Script: "echo ok > new.txt"})
			if err != nil || content(filepath.Join(proj, "new.txt")) != "ok\n" {
				t.Errorf("commands no longer write after plan mode: %v %s", err, r.Output)
			}
		})
	}
}
