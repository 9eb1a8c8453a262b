package extend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDynamicCommands: commands another program offers (MCP prompts) are
// listed after the files' commands, looked up, and run through Fetch with
// the arguments typed; a file's command of the same name wins; Expand
// leaves them to Run; the list is asked anew each time.
func TestDynamicCommands(t *testing.T) {
	proj := t.TempDir()
	dir := filepath.Join(proj, ".agents", "commands")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "fix.md"), []byte("Fix $ARGUMENTS"), 0o644)
	os.WriteFile(filepath.Join(dir, "mcp__s__clash.md"), []byte("from the file"), 0o644)
	cs, warns := DiscoverCommands(proj, "", nil, nil)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	offered := []Command{{Name: "mcp__s__review", Scope: "mcp", Path: "server s",
		Fetch: func(ctx context.Context, args string) (string, error) {
			if args == "" {
				return "", errors.New("needs file")
			}
			return "Review " + args, nil
		}}, {Name: "mcp__s__clash", Fetch: func(context.Context, string) (string, error) { return "from the server", nil }}}
	cs.SetDynamic(func() []Command { return offered })

	var names []string
	for _, c := range cs.List() {
		names = append(names, c.Name)
	}
	if got := fmt.Sprint(names); got != "[fix mcp__s__clash mcp__s__review]" {
		t.Errorf("list: %s", got)
	}
	ctx := context.Background()
	if p, c, ok, err := cs.Run(ctx, "/mcp__s__review  a.go "); !ok || err != nil || p != "Review a.go" || c.Where() != "mcp: server s" {
		t.Errorf("run: %q %+v %v %v", p, c, ok, err)
	}
	if _, _, ok, err := cs.Run(ctx, "/mcp__s__review"); !ok || err == nil {
		t.Errorf("a failing fetch: %v %v", ok, err)
	}
	if p, _, ok, _ := cs.Run(ctx, "/mcp__s__clash"); !ok || p != "from the file" {
		t.Errorf("the file's command did not win: %q", p)
	}
	if p, _, ok, _ := cs.Run(ctx, "/fix the bug"); !ok || p != "Fix the bug" {
		t.Errorf("a file command through Run: %q", p)
	}
	if _, _, ok := cs.Expand("/mcp__s__review a.go"); ok {
		t.Errorf("Expand took a dynamic command")
	}
	if _, _, ok, _ := cs.Run(ctx, "/nosuch"); ok {
		t.Errorf("an unknown command ran")
	}
	offered = offered[:1]
	offered[0].Name = "mcp__s__other"
	if _, ok := cs.Lookup("mcp__s__other"); !ok {
		t.Errorf("the list was not asked anew")
	}
}
