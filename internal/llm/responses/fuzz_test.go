package responses

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// FuzzParseStream feeds arbitrary bytes to the stream parser: it returns a
// reply or an error, never panics, never a tool call whose input is not
// valid JSON, and never a reasoning block whose item is not the JSON
// object it will send back. Seeded with every recorded Responses stream;
// as a plain test it runs the seeds only.
func FuzzParseStream(f *testing.F) {
	paths, _ := filepath.Glob("../llmtest/testdata/responses/*/*/*streaming*.yaml")
	if len(paths) == 0 {
		f.Fatal("no recorded Responses streams to seed from")
	}
	for _, p := range paths {
		ints, err := llmtest.LoadCassette(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, in := range ints {
			f.Add([]byte(in.Body))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reply, err := parseStream(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		llmtest.CheckReply(t, reply)
		for _, b := range reply.Message.Blocks {
			if b.Type == llm.BlockThinking && (!json.Valid(b.Item) || !isReasoningItem(b.Item)) {
				t.Fatalf("reasoning block with item %q", b.Item)
			}
		}
	})
}
