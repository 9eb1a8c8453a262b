package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// syntheticStream builds a stream of n events shaped like a real provider's
// text deltas.
func syntheticStream(format string, n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		text := strings.Repeat("tok ", 1+i%7)
		switch format {
		case "anthropic":
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", text)
		case "openai":
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", text)
		}
		if i%100 == 0 {
			b.WriteString(": keep-alive\n\n")
		}
	}
	return b.Bytes()
}

// BenchmarkSSEParse measures the raw SSE reader (no JSON decoding) over a
// large synthetic stream of each provider's shape.
func BenchmarkSSEParse(b *testing.B) {
	for _, format := range []string{"anthropic", "openai"} {
		data := syntheticStream(format, 20000)
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(data))
				for {
					if _, err := r.Next(); err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
	}
}
