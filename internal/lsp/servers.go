package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Server is how to start one language's server.
type Server struct {
	// Name names the language in what harness says ("Go").
	Name string
	// Extensions are the file name endings it handles, with the dot.
	Extensions []string
	// Candidates are the commands to try, first found on PATH wins; each
	// is argv (the server speaks LSP on its stdin and stdout).
	Candidates [][]string
}

// Builtin is the table used with no configuration.
func Builtin() []Server {
	return []Server{
		{Name: "Go", Extensions: []string{".go"}, Candidates: [][]string{{"gopls"}}},
		{Name: "Rust", Extensions: []string{".rs"}, Candidates: [][]string{{"rust-analyzer"}}},
		{Name: "TypeScript", Extensions: []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"},
			Candidates: [][]string{{"typescript-language-server", "--stdio"}}},
		{Name: "Python", Extensions: []string{".py", ".pyi"}, Candidates: [][]string{{"pyright-langserver", "--stdio"}, {"pylsp"}}},
		{Name: "C", Extensions: []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"}, Candidates: [][]string{{"clangd"}}},
	}
}

// ParseSetting applies the LSP setting to servers and returns the result.
// The setting is "off" (no server at all) or entries separated by ";",
// each EXT[,EXT...]=COMMAND [ARGS...] (words split on spaces, no quoting):
// the extensions are taken from the built-in servers that had them and
// given to COMMAND; an empty COMMAND turns them off. For example
// LSP='.py=pylsp;.zig=zls;.rs='.
func ParseSetting(servers []Server, setting string) ([]Server, error) {
	setting = strings.TrimSpace(setting)
	if setting == "" {
		return servers, nil
	}
	if strings.EqualFold(setting, "off") {
		return nil, nil
	}
	out := slices.Clone(servers)
	for _, entry := range strings.Split(setting, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		exts, command, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("LSP entry %q has no '=': write EXT=COMMAND, such as .py=pylsp, or EXT= to turn a language off", entry)
		}
		var list []string
		for _, e := range strings.Split(exts, ",") {
			e = strings.TrimSpace(e)
			if !strings.HasPrefix(e, ".") || len(e) < 2 || strings.ContainsAny(e, `/\ `) {
				return nil, fmt.Errorf("LSP entry %q: %q is not a file extension such as .py", entry, e)
			}
			list = append(list, strings.ToLower(e))
		}
		name := ""
		if s := serverFor(out, list[0]); s != nil {
			name = s.Name // the language keeps its name
		}
		out = without(out, list)
		if argv := strings.Fields(command); len(argv) > 0 {
			if name == "" {
				name = filepath.Base(argv[0])
			}
			out = append([]Server{{Name: name, Extensions: list, Candidates: [][]string{argv}}}, out...)
		}
	}
	return out, nil
}

// without takes exts away from every server, dropping those left with none.
func without(servers []Server, exts []string) []Server {
	var out []Server
	for _, s := range servers {
		s.Extensions = slices.DeleteFunc(slices.Clone(s.Extensions), func(e string) bool { return slices.Contains(exts, e) })
		if len(s.Extensions) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// serverFor finds the server handling path, or nil.
func serverFor(servers []Server, path string) *Server {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" {
		return nil
	}
	for i := range servers {
		if slices.Contains(servers[i].Extensions, ext) {
			return &servers[i]
		}
	}
	return nil
}

// find resolves the first candidate found on pathList (a PATH value) to
// its absolute argv; it says which commands it looked for when none is
// there. A candidate given as a path is taken as it is.
func find(s *Server, pathList string) ([]string, error) {
	var names []string
	for _, argv := range s.Candidates {
		names = append(names, argv[0])
		if p, ok := lookPath(argv[0], pathList); ok {
			return append([]string{p}, argv[1:]...), nil
		}
	}
	return nil, fmt.Errorf("%s is not on PATH", strings.Join(names, " or "))
}

func lookPath(name, pathList string) (string, bool) {
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		if filepath.IsAbs(name) && executable(name) {
			return name, true
		}
		return "", false
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would mean the project's files
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p, true
		}
	}
	return "", false
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// languageID is LSP's name for a file's language.
func languageID(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".go":
		return "go"
	case ".rs":
		return "rust"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".jsx":
		return "javascriptreact"
	case ".py", ".pyi":
		return "python"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx":
		return "cpp"
	}
	return strings.TrimPrefix(ext, ".")
}
