package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/harness-dev/harness/internal/llm/openai"
)

// A loopback server that answers every path with 200 and JSON that is not
// Ollama's or llama.cpp's (LM Studio, a proxy, vLLM behind a catch-all) is
// not taken for either: no window is reported, so no warning to set
// CONTEXT_WINDOW=4096 appears.
func TestProbeWindowNeedsTheServersShape(t *testing.T) {
	for _, reply := range []string{
		`{}`,
		`{"status":"ok"}`,
		`{"object":"list","data":[{"id":"qwen3-coder","object":"model"}]}`,
		`{"error":{"message":"Unexpected endpoint or method. (POST /api/show)"}}`,
		`{"parameters":"","model_info":{}}`,
		`{"n_ctx":4096}`,
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, reply)
		}))
		if w, ok := openai.ProbeWindow(context.Background(), nil, hs.URL+"/v1", "qwen3-coder"); ok {
			t.Errorf("a server answering %s was taken for %s (%+v)", reply, w.Server, w)
		}
		hs.Close()
	}
}
