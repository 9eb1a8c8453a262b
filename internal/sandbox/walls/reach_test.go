package walls

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReach: a file is the commands' where it really is, whatever names
// it: a link from outside into the project is reachable, a .agents file
// is reachable but not writable, a link out of .agents to a project file
// is writable, and plan mode does not make the project unreachable.
func TestReach(t *testing.T) {
	base := t.TempDir()
	proj, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	for _, d := range []string{proj + "/.agents", home + "/.claude"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(proj+"/x.json", []byte("{}"), 0o644)
	os.WriteFile(proj+"/.agents/settings.json", []byte("{}"), 0o644)
	os.WriteFile(home+"/.claude/own.json", []byte("{}"), 0o644)
	os.Symlink(proj+"/x.json", home+"/.claude/settings.json")
	os.Symlink("../x.json", proj+"/.agents/permissions")
	pol, err := NewPolicy(PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	l.SetProjectReadOnly(true)
	p := l.Policy()
	for _, c := range []struct {
		path            string
		reach, canWrite bool
	}{
		{home + "/.claude/own.json", false, false},
		{home + "/.claude/settings.json", true, true},
		{proj + "/x.json", true, true},
		{proj + "/.agents/settings.json", true, false},
		{proj + "/.agents/permissions", true, true},
		{proj + "/missing/new.sh", true, true},
	} {
		if got := p.Reachable(c.path); got != c.reach {
			t.Errorf("Reachable(%s) = %v", c.path, got)
		}
		if got := p.CommandsCanWrite(c.path); got != c.canWrite {
			t.Errorf("CommandsCanWrite(%s) = %v", c.path, got)
		}
	}
}
