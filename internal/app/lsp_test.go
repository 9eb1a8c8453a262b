package app

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/notice"
)

// TestLSPSettingRefused: an LSP setting harness cannot read is a warning
// that names the entry, and the session opens without language servers.
func TestLSPSettingRefused(t *testing.T) {
	o := testOptions(t)
	o.Source.Env["LSP"] = "py=pylsp"
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i := slices.IndexFunc(s.Warnings, func(n notice.Notice) bool { return n.Kind == notice.Config && strings.Contains(n.Text, "LSP entry") })
	if i < 0 || !strings.Contains(s.Warnings[i].Text, `"py" is not a file extension such as .py`) {
		t.Fatalf("warnings: %+v", s.Warnings)
	}
}
