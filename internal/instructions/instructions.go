package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxBytes bounds one instruction file: it is sent with every request.
const MaxBytes = 64 << 10

// File is one loaded instruction file.
type File struct {
	Path  string
	Scope string // "user" or "project"
	Text  string
	Cut   bool // longer than MaxBytes; Text holds the start
}

// ProjectNames are tried in order at the project root; the first that exists
// is used.
var ProjectNames = []string{"AGENTS.md", "CLAUDE.md"}

// Load reads the user's and the project's instruction files (either dir may
// be ""). A missing file is not an error; an unreadable one is.
func Load(project, home string) ([]File, error) {
	var out []File
	if home != "" {
		f, ok, err := read(filepath.Join(home, ".agents", "AGENTS.md"), "user")
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	if project != "" {
		for _, name := range ProjectNames {
			f, ok, err := read(filepath.Join(project, name), "project")
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, f)
				break
			}
		}
	}
	return out, nil
}

func read(path, scope string) (File, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, fmt.Errorf("reading instructions %s: %w (fix its permissions or remove it)", path, err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	f := File{Path: path, Scope: scope}
	if len(text) > MaxBytes {
		text, f.Cut = text[:MaxBytes], true
	}
	f.Text = strings.TrimSpace(text)
	return f, f.Text != "", nil
}

// Render labels the files for the system prompt (agent.PromptInfo
// Instructions); "" when there are none.
func Render(files []File) string {
	var sb strings.Builder
	for i, f := range files {
		if i > 0 {
			sb.WriteByte('\n')
		}
		who := "the user's own instructions, for every project"
		if f.Scope == "project" {
			who = "this project's instructions"
		}
		fmt.Fprintf(&sb, "<instructions source=%q>\n(%s)\n%s\n", f.Path, who, f.Text)
		if f.Cut {
			fmt.Fprintf(&sb, "[cut at %d KB; read the file for the rest]\n", MaxBytes>>10)
		}
		sb.WriteString("</instructions>\n")
	}
	return sb.String()
}
