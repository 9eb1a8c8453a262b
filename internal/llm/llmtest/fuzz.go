package llmtest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// SeedStreams adds the body of every recorded streaming cassette under
// testdata/providers (relative to this package, reached from a sibling
// adapter package as ../llmtest) to a fuzz target's corpus.
func SeedStreams(f *testing.F, llmtestDir string) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join(llmtestDir, "testdata", "providers", "*", "*", "*_streaming.yaml"))
	if len(paths) == 0 {
		f.Fatalf("no recorded streams under %s/testdata/providers to seed from", llmtestDir)
	}
	for _, p := range paths {
		ints, err := LoadCassette(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, in := range ints {
			f.Add([]byte(in.Body))
		}
	}
}

// CheckReply fails t when a parsed reply breaks what the loop relies on:
// every tool call's input is valid JSON.
func CheckReply(t *testing.T, r *llm.Reply) {
	t.Helper()
	for _, b := range r.Message.ToolCalls() {
		if len(b.Input) > 0 && !json.Valid(b.Input) {
			t.Fatalf("tool call with invalid input %q", b.Input)
		}
	}
}
