package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Approvals remembers which project servers the user let run, by the hash
// of their definition: a definition that changed is not approved. It lives
// in the user's ~/.agents/, outside every sandbox's writable roots, so an
// agent cannot approve a server it planted in .mcp.json.
type Approvals struct {
	path     string
	Projects map[string]map[string]string `json:"projects"` // project -> server name -> Server.Hash
}

// ApprovalsFile is where approvals are kept under home.
func ApprovalsFile(home string) string {
	return filepath.Join(home, ".agents", "mcp-approved.json")
}

// LoadApprovals reads the approvals file; a missing file is none.
func LoadApprovals(path string) (*Approvals, error) {
	a := &Approvals{path: path, Projects: map[string]map[string]string{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("MCP approvals: %w", err)
	}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("MCP approvals %s: %w (remove the file to be asked again)", path, err)
	}
	if a.Projects == nil {
		a.Projects = map[string]map[string]string{}
	}
	return a, nil
}

// Approved reports whether s, as defined now, was approved for project.
// Only project servers need an approval.
func (a *Approvals) Approved(project string, s Server) bool {
	if s.Scope != ScopeProject {
		return true
	}
	return a.Projects[project][s.Name] == s.Hash()
}

// Approve records s as approved for project and saves the file.
func (a *Approvals) Approve(project string, s Server) error {
	if a.Projects[project] == nil {
		a.Projects[project] = map[string]string{}
	}
	a.Projects[project][s.Name] = s.Hash()
	return a.save()
}

// Revoke forgets the approval of name for project.
func (a *Approvals) Revoke(project, name string) error {
	delete(a.Projects[project], name)
	return a.save()
}

func (a *Approvals) save() error {
	raw, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(a.path, append(raw, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcp-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Add writes s into the configuration file at path (creating it), keeping
// the other servers and the file's other keys; an existing server of the
// same name is an error unless replace.
func Add(path string, s Server, replace bool) error {
	if err := s.validate(); err != nil {
		return err
	}
	doc, servers, err := readDoc(path)
	if err != nil {
		return err
	}
	if _, ok := servers[s.Name]; ok && !replace {
		return fmt.Errorf("server %s already exists in %s (remove it first)", s.Name, path)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	servers[s.Name] = raw
	return writeDoc(path, doc, servers)
}

// Remove deletes the server name from the file at path.
func Remove(path, name string) error {
	doc, servers, err := readDoc(path)
	if err != nil {
		return err
	}
	if _, ok := servers[name]; !ok {
		return fmt.Errorf("no server %s in %s", name, path)
	}
	delete(servers, name)
	return writeDoc(path, doc, servers)
}

func readDoc(path string) (map[string]json.RawMessage, map[string]json.RawMessage, error) {
	doc, servers := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, servers, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if s, ok := doc["mcpServers"]; ok {
		if err := json.Unmarshal(s, &servers); err != nil {
			return nil, nil, fmt.Errorf("%s: mcpServers: %w", path, err)
		}
	}
	return doc, servers, nil
}

func writeDoc(path string, doc, servers map[string]json.RawMessage) error {
	raw, err := json.Marshal(servers) // keys sorted by encoding/json
	if err != nil {
		return err
	}
	doc["mcpServers"] = raw
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(out, '\n'))
}
