package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func put(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string // relative to a root holding proj/ and home/
		want   []string          // scope:text of each file, in order
		wantIn string            // in the rendered text
	}{
		{"none", nil, nil, ""},
		{"agents wins over claude", map[string]string{"proj/AGENTS.md": "use tabs\n", "proj/CLAUDE.md": "claude"}, []string{"project:use tabs"}, "this project's instructions"},
		{"claude when no agents", map[string]string{"proj/CLAUDE.md": "claude rules"}, []string{"project:claude rules"}, "claude rules"},
		{"user first then project", map[string]string{"home/.agents/AGENTS.md": "be brief", "proj/AGENTS.md": "run make"}, []string{"user:be brief", "project:run make"}, "the user's own instructions"},
		{"empty file skipped", map[string]string{"proj/AGENTS.md": "  \n"}, nil, ""},
		{"crlf", map[string]string{"proj/AGENTS.md": "a\r\nb\r\n"}, []string{"project:a\nb"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, text := range tt.files {
				put(t, filepath.Join(root, p), text)
			}
			files, err := Load(filepath.Join(root, "proj"), filepath.Join(root, "home"), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Scope+":"+f.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			r := Render(files)
			if tt.wantIn != "" && !strings.Contains(r, tt.wantIn) {
				t.Fatalf("Render = %q, want it to contain %q", r, tt.wantIn)
			}
			if len(files) == 0 && r != "" {
				t.Fatalf("Render of nothing = %q", r)
			}
		})
	}
}

func TestLoadCutsLongFiles(t *testing.T) {
	proj := t.TempDir()
	put(t, filepath.Join(proj, "AGENTS.md"), strings.Repeat("x", MaxBytes+100))
	files, err := Load(proj, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !files[0].Cut || len(files[0].Text) != MaxBytes {
		t.Fatalf("files = %d, cut %v", len(files), len(files) == 1 && files[0].Cut)
	}
	if !strings.Contains(Render(files), "[cut at 64 KB") {
		t.Fatal("the cut is not said")
	}
}

func TestLoadUnreadableIsAnError(t *testing.T) {
	if os.Getuid() == 0 {
		// root reads mode-000 files; use a directory in the file's place.
		proj := t.TempDir()
		if err := os.Mkdir(filepath.Join(proj, "AGENTS.md"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(proj, "", nil); err == nil || !strings.Contains(err.Error(), "AGENTS.md") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	proj := t.TempDir()
	put(t, filepath.Join(proj, "AGENTS.md"), "x")
	if err := os.Chmod(filepath.Join(proj, "AGENTS.md"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(proj, "", nil); err == nil {
		t.Fatal("an unreadable AGENTS.md was ignored")
	}
}

// An instruction file that links to a secret, or is not a regular file,
// puts nothing into the prompt when read through the sandbox policy.
func TestLoadThroughPolicyRefusesLinksToSecrets(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	os.MkdirAll(filepath.Join(home, ".agents"), 0o755)
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(home, ".agents", "env"), []byte("ANTHROPIC_API_KEY=sk-canary"), 0o600)
	os.Symlink(filepath.Join(home, ".agents", "env"), filepath.Join(proj, "AGENTS.md"))
	os.Symlink("/dev/zero", filepath.Join(home, ".agents", "AGENTS.md"))
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	open := func(p string) (*os.File, error) {
		f, _, _, err := pol.OpenRead(p)
		return f, err
	}
	files, err := Load(proj, home, open)
	if err == nil {
		t.Errorf("no error for refused instruction files")
	}
	for _, f := range files {
		if strings.Contains(f.Text, "sk-canary") {
			t.Fatalf("the secret reached the instructions: %+v", f)
		}
	}
	// Without a policy the /dev/zero link is still refused, at once.
	if _, err := Load("", home, nil); err == nil {
		t.Error("a link to /dev/zero was read as instructions")
	}
}
