package lsp

import (
	"net/url"
	"path/filepath"
	"strings"
)

// The subset of LSP 3.17's types harness uses (the specification's names).

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"` // UTF-16 code units, LSP's default encoding
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

// Diagnostic severities.
const (
	severityError       = 1
	severityWarning     = 2
	severityInformation = 3
	severityHint        = 4
)

type diagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity,omitempty"` // absent: the client decides; harness takes it as an error
	Source   string   `json:"source,omitempty"`
	Message  string   `json:"message"`
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

// contentChange without a range replaces the whole text, which every
// sync kind accepts.
type contentChange struct {
	Text string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                 `json:"contentChanges"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type initializeParams struct {
	// ProcessID is null: the server lives in the sandbox's process
	// namespace, where harness's pid means nothing.
	ProcessID        *int              `json:"processId"`
	ClientInfo       clientInfo        `json:"clientInfo"`
	RootURI          string            `json:"rootUri"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     map[string]any    `json:"capabilities"`
}

type clientInfo struct {
	Name string `json:"name"`
}

// capabilities are what harness tells a server it handles: pushed
// diagnostics with versions, full-text sync, configuration requests
// (answered with nulls) and workspace folders.
func capabilities() map[string]any {
	return map[string]any{
		"textDocument": map[string]any{
			"synchronization":    map[string]any{"didSave": true},
			"publishDiagnostics": map[string]any{"versionSupport": true},
		},
		"workspace": map[string]any{
			"configuration":    true,
			"workspaceFolders": true,
		},
		"window": map[string]any{"workDoneProgress": false},
	}
}

// fileURI is the file: URI of an absolute path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// uriPath is the path of a file: URI ("" for another scheme).
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}
