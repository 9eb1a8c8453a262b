package llm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

func TestStatusErrorKinds(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		errType string
		msg     string
		want    llm.ErrorKind
	}{
		{"anthropic prompt too long", 400, "invalid_request_error", "prompt is too long: 202128 tokens > 200000 maximum", llm.ErrContextTooLong},
		{"anthropic input+max_tokens", 400, "invalid_request_error", "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again", llm.ErrContextTooLong},
		{"gemini input token count", 400, "", "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", llm.ErrContextTooLong},
		{"xai maximum prompt length", 400, "", "This model's maximum prompt length is 131072 but the request contains 136973 tokens.", llm.ErrContextTooLong},
		{"groq reduce the length", 400, "invalid_request_error context_length_exceeded", "Please reduce the length of the messages or completion.", llm.ErrContextTooLong},
		{"vllm maximum context length", 400, "BadRequestError", "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", llm.ErrContextTooLong},
		{"llama.cpp exceed_context_size", 400, "exceed_context_size_error", "the request exceeds the available context size, try increasing it", llm.ErrContextTooLong},
		{"gateway model_context_window_exceeded", 400, "invalid_request_error model_context_window_exceeded", "Your input exceeds the context window of this model.", llm.ErrContextTooLong},
		{"an unrelated 400", 400, "invalid_request_error", "messages: text content blocks must contain non-whitespace text", llm.ErrBadRequest},
		{"cloudflare 520", 520, "", "an HTML error page: example.com | 520: Web server is returning an unknown error", llm.ErrOverloaded},
		{"cloudflare 522", 522, "", "", llm.ErrOverloaded},
		{"cloudflare 524", 524, "", "", llm.ErrOverloaded},
		{"505 is final", 505, "", "", llm.ErrUnknown},
		{"anthropic unknown model", 404, "not_found_error", "model: claude-nonesuch", llm.ErrModelNotFound},
		{"openai unknown model", 404, "invalid_request_error model_not_found", "The model `gpt-nonesuch` does not exist or you do not have access to it.", llm.ErrModelNotFound},
		{"ollama unknown model", 404, "", `model "nonesuch" not found, try pulling it first`, llm.ErrModelNotFound},
		{"a wrong path is not the model", 404, "", "404 page not found", llm.ErrBadRequest},
	}
	for _, tt := range tests {
		e := llm.StatusError(tt.status, http.Header{}, tt.errType, tt.msg, time.Now())
		if e.Kind != tt.want {
			t.Errorf("%s: kind %v, want %v", tt.name, e.Kind, tt.want)
		}
		if (tt.want == llm.ErrOverloaded) != e.Retryable() {
			t.Errorf("%s: retryable %v", tt.name, e.Retryable())
		}
	}
}

func TestPlainBody(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>openrouter.ai | 524: A timeout\n occurred</title></head><body>…</body></html>"
	if got := llm.PlainBody([]byte(page)); got != "an HTML error page: openrouter.ai | 524: A timeout occurred" {
		t.Errorf("PlainBody = %q", got)
	}
	if got := llm.PlainBody([]byte("  upstream connect error \n")); got != "upstream connect error" {
		t.Errorf("PlainBody = %q", got)
	}
}

// TestModelNotFoundNamesModel: a 404 for the model, through the retry
// wrapper, names the model the request asked for and says how to list,
// switch and declare models; it is not retried.
func TestModelNotFoundNamesModel(t *testing.T) {
	calls := 0
	inner := providerFunc(func() error {
		calls++
		return llm.StatusError(404, http.Header{}, "not_found_error", "model: claude-nonesuch", time.Now())
	})
	_, err := llm.WithRetry(inner, llm.RetryOptions{}).Stream(context.Background(), &llm.Request{Model: "claude-nonesuch"}, nil)
	if calls != 1 {
		t.Errorf("%d attempts, want 1: a missing model is not transient", calls)
	}
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"model not found (HTTP 404)", `model "claude-nonesuch"`, "harness models", "/model NAME", "~/.agents/models.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}

// providerFunc is a provider whose every Stream fails with f's error.
type providerFunc func() error

func (f providerFunc) Name() string { return "fake" }
func (f providerFunc) Stream(context.Context, *llm.Request, func(llm.Event)) (*llm.Reply, error) {
	return nil, f()
}
