package responses

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkStreamParse measures the whole Responses stream decoding (SSE +
// JSON + accumulation) over a large synthetic reply, shaped as the
// recorded streams are.
func BenchmarkStreamParse(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"},\"output_index\":0,\"sequence_number\":1}\n\n")
	var text strings.Builder
	for i := 0; i < 20000; i++ {
		d := strings.Repeat("tok ", 1+i%7)
		text.WriteString(d)
		fmt.Fprintf(&buf, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"content_index\":0,\"delta\":%q,\"item_id\":\"msg_1\",\"logprobs\":[],\"obfuscation\":\"abc\",\"output_index\":0,\"sequence_number\":%d}\n\n", d, i+2)
	}
	fmt.Fprintf(&buf, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":%q}],\"role\":\"assistant\"},\"output_index\":0}\n\n", text.String())
	buf.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"model\":\"gpt-5\",\"output\":[],\"usage\":{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":20000,\"output_tokens_details\":{\"reasoning_tokens\":0}}}}\n\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseStream(bytes.NewReader(data), nil); err != nil {
			b.Fatal(err)
		}
	}
}
