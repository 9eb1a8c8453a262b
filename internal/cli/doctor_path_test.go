package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportPath: doctor says how to put harness on PATH when the shell
// would not find this binary by name, and says nothing when it would.
func TestReportPath(t *testing.T) {
	var out strings.Builder
	reportPath(Stdio{Out: &out}, "/nonexistent:/usr/bin")
	if !strings.Contains(out.String(), "harness is not on your PATH") || !strings.Contains(out.String(), "export PATH=") {
		t.Errorf("off PATH: %q", out.String())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "harness")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	reportPath(Stdio{Out: &out}, "/nonexistent:"+dir)
	if out.Len() != 0 {
		t.Errorf("on PATH, doctor still said: %q", out.String())
	}
}
