package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// FuzzParseStream feeds arbitrary bytes to the stream parser: whatever a
// server or a broken proxy sends, the parser returns a reply or an error,
// never panics, and never returns a reply with a tool call whose input is
// not valid JSON. Seeded with every recorded stream of this format; as a
// plain test it runs the seeds only.
func FuzzParseStream(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "llmtest", "testdata", "providers", "*", "*", "*_streaming.yaml"))
	for _, p := range paths {
		ints, err := llmtest.LoadCassette(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, in := range ints {
			f.Add([]byte(in.Body))
		}
	}
	if len(paths) == 0 {
		if _, err := os.Stat(filepath.Join("..", "llmtest", "testdata")); err != nil {
			f.Fatal("no recorded streams to seed from")
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reply, err := parseStream(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		for _, b := range reply.Message.ToolCalls() {
			if len(b.Input) > 0 && !json.Valid(b.Input) {
				t.Fatalf("tool call with invalid input %q", b.Input)
			}
		}
	})
}
