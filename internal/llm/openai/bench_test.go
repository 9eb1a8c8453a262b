package openai

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkStreamParse measures the whole Chat Completions stream decoding
// (SSE + JSON + accumulation) over a large synthetic reply.
func BenchmarkStreamParse(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&buf, "data: {\"id\":\"chatcmpl-x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", strings.Repeat("tok ", 1+i%7))
	}
	buf.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	buf.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20000}}\n\ndata: [DONE]\n\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseStream(bytes.NewReader(data), nil); err != nil {
			b.Fatal(err)
		}
	}
}
