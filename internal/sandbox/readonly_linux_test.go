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

// TestReadOnlyVariant: a Cmd.ReadOnly command (a sub-agent's bash) reads
// the project and writes only the private /tmp; the project, its .git and
// everything beside it stay as they were, asserted on the host.
func TestReadOnlyVariant(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, variant := range allBackends {
		t.Run(variant, func(t *testing.T) {
			sb, proj := openTest(t, variant, nil)
			os.WriteFile(filepath.Join(proj, "keep.txt"), []byte("original"), 0o644)
			ctx := context.Background()
			script := "cat keep.txt; echo evil > keep.txt; echo evil > new.txt; mkdir d; echo evil >> .git/config; " +
				"echo tmp-ok > \"${TMPDIR:-/tmp}/ro-probe\" && cat \"${TMPDIR:-/tmp}/ro-probe\""
			r, err := sb.Run(ctx, Cmd{Script: script, ReadOnly: true})
			if variant == BackendNone {
				if !errors.Is(err, ErrNoReadOnly) || CanReadOnly(sb) {
					t.Fatalf("the none backend ran a read-only command: %v", err)
				}
				return
			}
			if err != nil || !CanReadOnly(sb) {
				t.Fatal(err)
			}
			if !bytes.Contains(r.Output, []byte("original")) || !bytes.Contains(r.Output, []byte("tmp-ok")) {
				t.Errorf("could not read the project or write /tmp: %s", r.Output)
			}
			if content(filepath.Join(proj, "keep.txt")) != "original" || exists(filepath.Join(proj, "new.txt")) || exists(filepath.Join(proj, "d")) {
				t.Errorf("a read-only command wrote the project: %s", r.Output)
			}
			if content(filepath.Join(proj, ".git", "config")) != "[core]\n" {
				t.Error("a read-only command wrote .git/config")
			}
			// The ordinary walls still write the project.
			r, err = sb.Run(ctx, Cmd{Script: "echo ok > new.txt"})
			if err != nil || content(filepath.Join(proj, "new.txt")) != "ok\n" {
				t.Errorf("the ordinary walls no longer write the project: %v %s", err, r.Output)
			}
		})
	}
}
