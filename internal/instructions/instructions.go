package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Opener opens a file for reading. A session passes its sandbox policy's
// (walls.Policy.OpenRead): it resolves every link, refuses secrets and
// anything but a regular file, and checks what it opened, so an AGENTS.md
// that links to ~/.agents/env puts nothing into the prompt.
type Opener func(path string) (*os.File, error)

// OpenRegular is the Opener without a policy: regular files only, opened
// without blocking.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// Load reads the user's and the project's instruction files (either dir may
// be "") through open (nil means OpenRegular). A missing file is not an
// error; an unreadable or refused one is.
func Load(project, home string, open Opener) ([]File, error) {
	if open == nil {
		open = OpenRegular
	}
	var out []File
	if home != "" {
		f, ok, err := read(open, filepath.Join(home, ".agents", "AGENTS.md"), "user")
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	if project != "" {
		for _, name := range ProjectNames {
			f, ok, err := read(open, filepath.Join(project, name), "project")
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

func read(open Opener, path, scope string) (File, bool, error) {
	var data []byte
	fh, err := open(path)
	if err == nil {
		// One byte past the bound says it was cut.
		data, err = io.ReadAll(io.LimitReader(fh, MaxBytes+1))
		fh.Close()
	}
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
