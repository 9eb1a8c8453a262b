package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/llm"
)

const (
	maxGlobResults = 500
	maxGrepMatches = 200
)

// skipDir reports directories that searches never enter: version control
// internals and dependency caches the model almost never means.
func skipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv":
		return true
	}
	return false
}

// Glob finds files by name pattern.
type Glob struct{ Env *Env }

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// Spec implements Tool.
func (g *Glob) Spec() llm.Tool {
	return llm.Tool{
		Name: "glob",
		Description: "Find files whose path matches a glob pattern, relative to path (default the project root). " +
			"'*' matches within one path segment, '**' across directories: '**/*.go', 'internal/**/doc.go'. " +
			"Skips .git and node_modules. Returns at most 500 paths, sorted.",
		Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern."},"path":{"type":"string","description":"Directory to search (default the project root)."}},"required":["pattern"]}`),
	}
}

// Access implements Tool.
func (g *Glob) Access(input json.RawMessage) (Access, error) {
	var a globArgs
	if err := decode(input, &a, "pattern"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "glob", Path: g.Env.abs(a.Path)}, nil
}

// Run implements Tool.
func (g *Glob) Run(ctx context.Context, input json.RawMessage) Result {
	var a globArgs
	if err := decode(input, &a, "pattern"); err != nil {
		return Errorf("%v", err)
	}
	root := g.Env.abs(a.Path)
	re, err := globRegexp(a.Pattern)
	if err != nil {
		return Errorf("bad pattern %q: %v", a.Pattern, err)
	}
	var found []string
	more := 0
	err = g.Env.policy().Walk(ctx, root, func(p string, d fs.DirEntry) error {
		if d.IsDir() {
			if skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if re.MatchString(filepath.ToSlash(rel)) {
			if len(found) < maxGlobResults {
				found = append(found, g.Env.rel(p))
			} else {
				more++
			}
		}
		return nil
	})
	if err != nil {
		return Errorf("glob stopped: %v", err)
	}
	if len(found) == 0 {
		return Result{Content: fmt.Sprintf("no files match %q under %s", a.Pattern, g.Env.rel(root))}
	}
	sort.Strings(found)
	out := strings.Join(found, "\n")
	if more > 0 {
		out += fmt.Sprintf("\n[%d more matches not shown; narrow the pattern]", more)
	}
	return Result{Content: out}
}

// globRegexp compiles a glob with ** into an anchored regexp.
func globRegexp(pat string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString("^")
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '*':
			if i+1 < len(pat) && pat[i+1] == '*' {
				i++
				if i+1 < len(pat) && pat[i+1] == '/' {
					i++
					sb.WriteString("(?:.*/)?")
				} else {
					sb.WriteString(".*")
				}
			} else {
				sb.WriteString("[^/]*")
			}
		case '?':
			sb.WriteString("[^/]")
		case '{':
			j := strings.IndexByte(pat[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unclosed {")
			}
			alts := strings.Split(pat[i+1:i+j], ",")
			for k := range alts {
				alts[k] = regexp.QuoteMeta(alts[k])
			}
			sb.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i += j
		case '[':
			j := strings.IndexByte(pat[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unclosed [")
			}
			sb.WriteString(pat[i : i+j+1])
			i += j
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	return regexp.Compile(sb.String())
}

// Grep searches file contents.
type Grep struct{ Env *Env }

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	CaseInsensitive bool   `json:"case_insensitive"`
}

// Spec implements Tool.
func (g *Grep) Spec() llm.Tool {
	return llm.Tool{
		Name: "grep",
		Description: "Search file contents with a regular expression (Go RE2 syntax) under path (a file or directory, " +
			"default the project root), optionally only in files matching glob (e.g. '**/*.go'). Returns " +
			"'path:line: text' for at most 200 matches. Skips binary files, .git and node_modules.",
		Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"Regular expression."},"path":{"type":"string","description":"File or directory (default the project root)."},"glob":{"type":"string","description":"Only search files whose path matches this glob."},"case_insensitive":{"type":"boolean"}},"required":["pattern"]}`),
	}
}

// Access implements Tool.
func (g *Grep) Access(input json.RawMessage) (Access, error) {
	var a grepArgs
	if err := decode(input, &a, "pattern"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "grep", Path: g.Env.abs(a.Path)}, nil
}

// Run implements Tool.
func (g *Grep) Run(ctx context.Context, input json.RawMessage) Result {
	var a grepArgs
	if err := decode(input, &a, "pattern"); err != nil {
		return Errorf("%v", err)
	}
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Errorf("bad regular expression: %v", err)
	}
	var only *regexp.Regexp
	if a.Glob != "" {
		if only, err = globRegexp(a.Glob); err != nil {
			return Errorf("bad glob %q: %v", a.Glob, err)
		}
	}
	root := g.Env.abs(a.Path)
	pol := g.Env.policy()
	var out []string
	more := 0
	f, _, fi, err := pol.OpenRead(root)
	switch {
	case err == nil:
		// One file: grep it alone.
		more += grepFile(f, fi, g.Env.rel(root), re, &out)
		f.Close()
	case !errors.Is(err, walls.ErrNotRegular):
		return Errorf("%v", fileError(a.Path, err))
	default:
		err = pol.Walk(ctx, root, func(p string, d fs.DirEntry) error {
			if d.IsDir() {
				if skipDir(d.Name()) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if only != nil {
				rel, _ := filepath.Rel(root, p)
				if !only.MatchString(filepath.ToSlash(rel)) && !only.MatchString(d.Name()) {
					return nil
				}
			}
			f, _, fi, err := pol.OpenRead(p)
			if err != nil {
				return nil // refused or swapped: not searched
			}
			more += grepFile(f, fi, g.Env.rel(p), re, &out)
			f.Close()
			return nil
		})
	}
	if err != nil {
		return Errorf("grep stopped: %v", err)
	}
	if len(out) == 0 {
		return Result{Content: fmt.Sprintf("no matches for %q", a.Pattern)}
	}
	s := strings.Join(out, "\n")
	if more > 0 {
		s += fmt.Sprintf("\n[%d more matches not shown; narrow the pattern or path]", more)
	}
	return Result{Content: s}
}

// grepFile appends matches of re in path to out (up to the limit) and returns
// how many matches did not fit.
func grepFile(f *os.File, fi os.FileInfo, show string, re *regexp.Regexp, out *[]string) int {
	if fi.Size() > maxFileBytes {
		return 0 // read_file refuses it too; bash grep reads it inside the walls
	}
	br := bufio.NewReader(io.LimitReader(f, maxFileBytes))
	if head, _ := br.Peek(8000); isBinary(head) && len(head) > 0 {
		return 0
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	more := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !re.MatchString(line) {
			continue
		}
		if len(*out) >= maxGrepMatches {
			more++
			continue
		}
		*out = append(*out, fmt.Sprintf("%s:%d: %s", show, n, clip(line, 300)))
	}
	return more
}
