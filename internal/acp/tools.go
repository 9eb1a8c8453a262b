package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// maxDiffBytes bounds the files an edit's diff shows whole.
const maxDiffBytes = 1 << 20

// maxContent bounds the text of a tool result sent to the client.
const maxContent = 64 << 10

// toolKind is the ACP kind of a harness tool.
func toolKind(name string) string {
	switch name {
	case "read_file", "read_skill", "bash_output":
		return "read"
	case "edit_file", "write_file":
		return "edit"
	case "bash", "bash_stop":
		return "execute"
	case "glob", "grep":
		return "search"
	case "web_fetch", "web_search":
		return "fetch"
	case "write_todos", "task":
		return "think"
	}
	return "other"
}

type toolInput struct {
	Command     string `json:"command"`
	Path        string `json:"path"`
	FilePath    string `json:"file_path"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Description string `json:"description"`
	Name        string `json:"name"`
	Offset      int    `json:"offset"`
}

func decodeInput(in json.RawMessage) toolInput {
	var ti toolInput
	_ = json.Unmarshal(in, &ti)
	if ti.Path == "" {
		ti.Path = ti.FilePath
	}
	return ti
}

// inputPath is the call's path made absolute against the project.
func inputPath(in json.RawMessage, project string) string {
	p := decodeInput(in).Path
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(project, p)
	}
	return filepath.Clean(p)
}

func locations(in json.RawMessage, project string) []location {
	p := inputPath(in, project)
	if p == "" {
		return nil
	}
	l := location{Path: p}
	if off := decodeInput(in).Offset; off > 0 {
		l.Line = off
	}
	return []location{l}
}

// toolTitle is a call in a line, as the client lists it.
func toolTitle(call llm.Block, project string) string {
	ti := decodeInput(call.Input)
	rel := func(p string) string {
		if !filepath.IsAbs(p) {
			return p
		}
		if r, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	var arg string
	switch {
	case ti.Command != "":
		arg = ti.Command
	case ti.Pattern != "" && ti.Path != "":
		arg = ti.Pattern + " in " + rel(ti.Path)
	case ti.Pattern != "":
		arg = ti.Pattern
	case ti.Path != "":
		arg = rel(ti.Path)
	case ti.URL != "":
		arg = ti.URL
	case ti.Query != "":
		arg = ti.Query
	case ti.Description != "":
		arg = ti.Description
	case ti.Name != "":
		arg = ti.Name
	}
	arg = oneLine(arg)
	if arg == "" {
		return call.Name
	}
	switch call.Name {
	case "bash":
		return arg
	case "read_file":
		return "Read " + arg
	case "edit_file":
		return "Edit " + arg
	case "write_file":
		return "Write " + arg
	}
	return fmt.Sprintf("%s %s", call.Name, arg)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// clip bounds a tool result's text for the client; the model got it whole
// (or as harness's own cap left it).
func clip(s string) string {
	if len(s) <= maxContent {
		return s
	}
	return s[:maxContent] + fmt.Sprintf("\n… (%d more bytes)", len(s)-maxContent)
}

// decodeImage reads an image content block, scaled as harness scales
// pasted images.
func decodeImage(b contentBlock) (*llm.Image, error) {
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return nil, fmt.Errorf("the image's data is not base64: %w", err)
	}
	name := "image"
	if b.URI != "" {
		name = filepath.Base(linkTarget(b.URI))
	}
	img, err := llm.PrepareImage(name, data)
	if err != nil {
		return nil, err
	}
	return img, nil
}
