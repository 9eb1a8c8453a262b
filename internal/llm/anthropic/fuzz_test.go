package anthropic

import (
	"bytes"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// FuzzParseStream feeds arbitrary bytes to the stream parser: whatever a
// server or a broken proxy sends, it returns a reply or an error, never
// panics, and never a tool call whose input is not valid JSON. Seeded with
// every recorded stream; as a plain test it runs the seeds only.
func FuzzParseStream(f *testing.F) {
	llmtest.SeedStreams(f, "../llmtest")
	f.Fuzz(func(t *testing.T, data []byte) {
		if reply, err := parseStream(bytes.NewReader(data), nil); err == nil {
			llmtest.CheckReply(t, reply)
		}
	})
}
