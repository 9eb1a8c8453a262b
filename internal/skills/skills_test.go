package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in           string
		wantName, wantDesc string
		wantBody           string
		wantErr            string
	}{
		{"simple", "---\nname: release\ndescription: Cut a release.\n---\nStep 1\n", "release", "Cut a release.", "Step 1\n", ""},
		{"crlf and bom", "\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n", "a", "b", "body\n", ""},
		{"folded description", "---\nname: x\ndescription: >\n  two\n  lines\n---\n", "x", "two lines", "", ""},
		{"closing at end", "---\nname: x\ndescription: d\n---", "x", "d", "", ""},
		{"no front matter", "# Title\n", "", "", "", "no YAML front matter"},
		{"unclosed", "---\nname: x\n", "", "", "", "not closed"},
		{"bad yaml", "---\nname: [x\n---\n", "", "", "", "not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, err := Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fm.Name != tt.wantName || fm.Description != tt.wantDesc || body != tt.wantBody {
				t.Fatalf("got %q %q body %q", fm.Name, fm.Description, body)
			}
		})
	}
}

func TestDiscoverProjectWinsAndWarns(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(proj, ".agents/skills/release/SKILL.md"), "---\nname: release\ndescription: Project release steps.\n---\nproject body\n")
	write(t, filepath.Join(home, ".agents/skills/release/SKILL.md"), "---\nname: release\ndescription: My release habit.\n---\nuser body\n")
	write(t, filepath.Join(home, ".agents/skills/review/SKILL.md"), "---\ndescription: Review a change.\n---\n") // name from the directory
	write(t, filepath.Join(home, ".agents/skills/broken/SKILL.md"), "no front matter\n")
	write(t, filepath.Join(home, ".agents/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\n")
	write(t, filepath.Join(home, ".agents/skills/stray.md"), "not a directory")
	if err := os.MkdirAll(filepath.Join(home, ".agents/skills/empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	set, warns := Discover(proj, home, nil)
	if got := strings.Join(set.Names(), ","); got != "release,review" {
		t.Fatalf("names = %s", got)
	}
	sk, _ := set.Lookup("release")
	if sk.Scope != ScopeProject {
		t.Fatalf("release came from %s, want the project", sk.Scope)
	}
	body, err := sk.Read()
	if err != nil || !strings.Contains(body, "project body") {
		t.Fatalf("Read = %q, %v", body, err)
	}
	if len(warns) != 2 {
		t.Fatalf("warnings = %v, want broken and nodesc", warns)
	}
	joined := errors.Join(warns...).Error()
	if !strings.Contains(joined, "broken") || !strings.Contains(joined, "no description") {
		t.Fatalf("warnings = %s", joined)
	}
	want := "- release: Project release steps.\n- review: Review a change.\n"
	if got := set.Prompt(); got != want {
		t.Fatalf("Prompt = %q, want %q", got, want)
	}
}

func TestDiscoverNothing(t *testing.T) {
	set, warns := Discover(t.TempDir(), "", nil)
	if set.Prompt() != "" || len(warns) != 0 {
		t.Fatalf("prompt %q, warnings %v", set.Prompt(), warns)
	}
	var nilSet *Set
	if _, ok := nilSet.Lookup("x"); ok {
		t.Fatal("nil set found a skill")
	}
}

// A SKILL.md that links to a secret is skipped when read through the
// sandbox policy, at discovery and at load.
func TestDiscoverThroughPolicy(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	write(t, filepath.Join(home, ".ssh", "id_rsa"), "---\nname: key\ndescription: ssh-canary\n---\n")
	write(t, filepath.Join(proj, ".agents", "skills", "ok", FileName), "---\ndescription: fine\n---\nbody\n")
	os.MkdirAll(filepath.Join(proj, ".agents", "skills", "evil"), 0o755)
	os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(proj, ".agents", "skills", "evil", FileName))
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	open := func(p string) (*os.File, error) {
		f, _, _, err := pol.OpenRead(p)
		return f, err
	}
	set, warns := Discover(proj, home, open)
	if names := strings.Join(set.Names(), ","); names != "ok" || len(warns) != 1 {
		t.Fatalf("skills %q, warnings %v", names, warns)
	}
	if strings.Contains(set.Prompt(), "ssh-canary") {
		t.Fatal("the secret reached the prompt")
	}
	sk, _ := set.Lookup("ok")
	// Swapped for a link to the secret after discovery: refused at load.
	os.Remove(sk.Path)
	os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), sk.Path)
	if text, err := sk.Read(); err == nil || strings.Contains(text, "ssh-canary") {
		t.Fatalf("read_skill read through a swapped link: %q %v", text, err)
	}
}
