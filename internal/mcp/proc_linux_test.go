package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// procsMatching lists the host's processes whose command line contains
// every one of ss.
func procsMatching(ss ...string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || e.Name() == "self" {
			continue
		}
		cmd := string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '}))
		all := true
		for _, s := range ss {
			all = all && strings.Contains(cmd, s)
		}
		if all {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}
