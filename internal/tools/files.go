package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/llm"
)

// Limits of read_file.
const (
	defaultReadLines = 2000
	maxLineChars     = 2000
	maxReadBytes     = 256 << 10 // what one read_file call may return
	maxFileBytes     = 64 << 20  // files larger than this are never loaded whole
)

// ReadFile reads a text file with line numbers.
type ReadFile struct{ Env *Env }

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// Spec implements Tool.
func (r *ReadFile) Spec() llm.Tool {
	return llm.Tool{
		Name: "read_file",
		Description: "Read a text file. Returns lines prefixed with their 1-based line number and a tab (like cat -n). " +
			"By default the first 2000 lines; use offset (first line, 1-based) and limit (number of lines) to page " +
			"through longer files. Lines longer than 2000 characters are cut. Binary files are refused. Paths are " +
			"relative to the project root unless absolute. Read a file before editing it." + r.imagesNote(),
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to read."},"offset":{"type":"integer","description":"First line to return, 1-based (default 1)."},"limit":{"type":"integer","description":"Number of lines to return (default 2000)."}},"required":["path"]}`),
	}
}

// Access implements Tool.
func (r *ReadFile) Access(input json.RawMessage) (Access, error) {
	var a readArgs
	if err := decode(input, &a, "path"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "read_file", Path: r.Env.abs(a.Path)}, nil
}

// Run implements Tool.
func (r *ReadFile) Run(ctx context.Context, input json.RawMessage) Result {
	var a readArgs
	if err := decode(input, &a, "path"); err != nil {
		return Errorf("%v", err)
	}
	path := r.Env.abs(a.Path)
	data, _, err := r.Env.policy().ReadFile(path, maxFileBytes)
	if err != nil {
		return Errorf("%v", fileError(a.Path, err))
	}
	if llm.IsImagePath(path) && isBinary(data) {
		return r.image(a.Path, data)
	}
	if isBinary(data) {
		return Errorf("%s looks binary (%d bytes); read_file only shows text. Use bash (file, xxd | head, strings) to inspect it", a.Path, len(data))
	}
	r.Env.seen.record(path, data)
	if len(data) == 0 {
		return Result{Content: "(empty file)"}
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	offset := max(a.Offset, 1)
	limit := a.Limit
	if limit <= 0 {
		limit = defaultReadLines
	}
	if offset > len(lines) {
		return Errorf("offset %d is past the end: %s has %d lines", offset, a.Path, len(lines))
	}
	end := min(offset-1+limit, len(lines))
	var sb strings.Builder
	for i := offset - 1; i < end; i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if len(line) > maxLineChars {
			line = line[:maxLineChars] + fmt.Sprintf("… [%d more chars]", len(line)-maxLineChars)
		}
		fmt.Fprintf(&sb, "%6d\t%s\n", i+1, line)
		if sb.Len() > maxReadBytes {
			end = i + 1
			break
		}
	}
	if end < len(lines) {
		fmt.Fprintf(&sb, "[lines %d-%d of %d; continue with offset=%d]\n", offset, end, len(lines), end+1)
	}
	return Result{Content: sb.String()}
}

func isBinary(b []byte) bool {
	head := b[:min(len(b), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Forgive a rune cut in two at the end of the window.
	for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// fileError words a file operation's failure for the model, decided by
// the error's type.
func fileError(shown string, err error) error {
	var se *walls.SizeError
	var de *walls.DeniedError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s is %d MB, too large to read here; use bash with head, tail, sed -n or grep", shown, se.Size>>20)
	case errors.As(err, &de):
		return err
	case errors.Is(err, walls.ErrNotRegular):
		if strings.Contains(err.Error(), "a directory") {
			return fmt.Errorf("%s is a directory; use glob or bash ls to list it", shown)
		}
		return fmt.Errorf("%s is not a regular file (%v); the file tools read and write regular files only, use bash for devices and pipes", shown, err)
	case errors.Is(err, walls.ErrRaced):
		return fmt.Errorf("%s changed while it was being opened (something is swapping it); nothing was read or written: %v", shown, err)
	}
	return fmt.Errorf("cannot access %s: %v", shown, friendly(err))
}

func friendly(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file; use glob to find it")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	return err
}

// WriteFile creates or overwrites a file.
type WriteFile struct{ Env *Env }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Spec implements Tool.
func (w *WriteFile) Spec() llm.Tool {
	return llm.Tool{
		Name: "write_file",
		Description: "Create a file or replace its whole content. Parent directories are created. The write is atomic. " +
			"Only paths inside the project can be written, never .git or .agents. To change part of an existing file " +
			"use edit_file instead.",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to write."},"content":{"type":"string","description":"The complete new content."}},"required":["path","content"]}`),
	}
}

// Access implements Tool.
func (w *WriteFile) Access(input json.RawMessage) (Access, error) {
	var a writeArgs
	if err := decode(input, &a, "path", "content"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "write_file", Path: w.Env.abs(a.Path), Write: true}, nil
}

// Run implements Tool.
func (w *WriteFile) Run(ctx context.Context, input json.RawMessage) Result {
	var a writeArgs
	if err := decode(input, &a, "path", "content"); err != nil {
		return Errorf("%v", err)
	}
	path := w.Env.abs(a.Path)
	if cur, _, err := w.Env.policy().ReadFile(path, maxFileBytes); err == nil {
		if err := w.Env.seen.stale(path, a.Path, cur); err != nil {
			return Errorf("%v", err)
		}
	}
	res, err := w.Env.write(path, []byte(a.Content))
	if err != nil {
		return Errorf("%v", fileError(a.Path, err))
	}
	verb := "updated"
	if res.Created {
		verb = "created"
	}
	text := fmt.Sprintf("%s %s (%d bytes, %d lines)", verb, w.Env.rel(path), len(a.Content), strings.Count(a.Content, "\n")+boolInt(!strings.HasSuffix(a.Content, "\n") && a.Content != ""))
	return Result{Content: text + w.Env.diagnose(ctx, res.Real, []byte(a.Content))}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// EditFile replaces exact text in a file.
type EditFile struct{ Env *Env }

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// Spec implements Tool.
func (e *EditFile) Spec() llm.Tool {
	return llm.Tool{
		Name: "edit_file",
		Description: "Replace exact text in a file. old_string must match the file exactly, including whitespace and " +
			"indentation (copy it from read_file output without the line-number prefix), and must occur exactly once " +
			"unless replace_all is true; include enough surrounding lines to make it unique. Read the file first.",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File to edit."},"old_string":{"type":"string","description":"Exact text to replace."},"new_string":{"type":"string","description":"Replacement text."},"replace_all":{"type":"boolean","description":"Replace every occurrence (default false)."}},"required":["path","old_string","new_string"]}`),
	}
}

// Access implements Tool.
func (e *EditFile) Access(input json.RawMessage) (Access, error) {
	var a editArgs
	if err := decode(input, &a, "path", "old_string", "new_string"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "edit_file", Path: e.Env.abs(a.Path), Write: true}, nil
}

// Run implements Tool.
func (e *EditFile) Run(ctx context.Context, input json.RawMessage) Result {
	var a editArgs
	if err := decode(input, &a, "path", "old_string", "new_string"); err != nil {
		return Errorf("%v", err)
	}
	path := e.Env.abs(a.Path)
	if err := e.Env.policy().CheckWrite(path); err != nil {
		return Errorf("%v", err)
	}
	if a.OldString == "" {
		return Errorf("old_string is empty; to create a file use write_file")
	}
	if a.OldString == a.NewString {
		return Errorf("old_string and new_string are the same; nothing to do")
	}
	data, real, err := e.Env.policy().ReadFile(path, maxFileBytes)
	if err != nil {
		return Errorf("%v", fileError(a.Path, err))
	}
	if err := e.Env.seen.stale(path, a.Path, data); err != nil {
		return Errorf("%v", err)
	}
	text := string(data)
	n := strings.Count(text, a.OldString)
	switch {
	case n == 0:
		hint := ""
		if strings.Contains(text, strings.TrimSpace(a.OldString)) {
			hint = " (it does occur with different leading/trailing whitespace)"
		}
		return Errorf("old_string was not found in %s%s; read the file again and copy the text exactly", a.Path, hint)
	case n > 1 && !a.ReplaceAll:
		return Errorf("old_string occurs %d times in %s; add surrounding lines to make it unique, or set replace_all", n, a.Path)
	}
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, a.OldString, a.NewString)
	} else {
		text = strings.Replace(text, a.OldString, a.NewString, 1)
	}
	// The file read is the one written: its real path, checked again.
	res, err := e.Env.write(real, []byte(text))
	if err != nil {
		return Errorf("%v", fileError(a.Path, err))
	}
	e.Env.seen.record(path, []byte(text))
	return Result{Content: fmt.Sprintf("edited %s: %d replacement(s)", e.Env.rel(path), n) + e.Env.diagnose(ctx, res.Real, []byte(text))}
}
