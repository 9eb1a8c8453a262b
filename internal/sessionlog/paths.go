package sessionlog

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"time"
)

// Root is the directory holding every project's sessions.
func Root(home string) string { return filepath.Join(home, ".agents", "sessions") }

// ProjectKey names a project's session directory: the readable tail of its
// path plus a short hash of the whole, so two projects never share one.
func ProjectKey(project string) string {
	sum := sha256.Sum256([]byte(project))
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, filepath.Base(project))
	return base + "-" + hex.EncodeToString(sum[:4])
}

// Dir is the directory of one project's sessions.
func Dir(home, project string) string { return filepath.Join(Root(home), ProjectKey(project)) }

// NewID returns a fresh random session id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// FileName is the log's file name: sortable by start time, then the id.
func FileName(start time.Time, id string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + id + ".jsonl"
}
