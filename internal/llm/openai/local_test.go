package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

func TestProbeWindow(t *testing.T) {
	tests := []struct {
		name    string
		local   llmtest.Local
		base    string // appended to the server URL
		tokens  int
		server  string
		def     bool
		warning string // "" when CONTEXT_WINDOW=32768 fits
	}{
		{"ollama loaded model", llmtest.Local{Kind: "ollama", Context: 8192, Trained: 262144, Loaded: true}, "/v1", 8192, "Ollama", false, "runs qwen3-coder with a 8192-token context (/api/ps"},
		{"ollama Modelfile num_ctx", llmtest.Local{Kind: "ollama", Context: 65536, Trained: 262144, InParameters: true}, "/v1", 65536, "Ollama", false, ""},
		{"ollama default", llmtest.Local{Kind: "ollama", Trained: 262144}, "/v1", 4096, "Ollama", true, "uses its default of 4096 tokens"},
		{"llama.cpp props", llmtest.Local{Kind: "llamacpp", Context: 16384}, "", 16384, "llama.cpp", false, "llama.cpp runs qwen3-coder with a 16384-token context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.SetLocal(tt.local)
			w, ok := openai.ProbeWindow(context.Background(), nil, srv.URL+tt.base, "qwen3-coder")
			if !ok || w.Tokens != tt.tokens || w.Server != tt.server || w.Default != tt.def {
				t.Fatalf("ProbeWindow = %+v, %v", w, ok)
			}
			msg := openai.WindowWarning(w, 32768, "qwen3-coder", "~/.agents/env")
			if (msg == "") != (tt.warning == "") || !strings.Contains(msg, tt.warning) {
				t.Errorf("warning %q, want it to say %q", msg, tt.warning)
			}
			if msg != "" && !strings.Contains(msg, "CONTEXT_WINDOW=") {
				t.Errorf("warning does not name the setting: %q", msg)
			}
		})
	}
	srv := llmtest.NewServer(t)
	if _, ok := openai.ProbeWindow(context.Background(), nil, srv.URL, "m"); ok {
		t.Error("a server with neither API was probed as local")
	}
}

// Ollama cuts an over-long prompt from the front and reports the kept
// part as the prompt: harness says so once and counts what it sent.
func TestFrontTruncationDetected(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetLocal(llmtest.Local{Kind: "ollama", Context: 4096, Truncate: true})
	srv.Enqueue(llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"}, llmtest.Reply{Text: "c"})
	p, _ := openai.NewChecked(openai.Config{BaseURL: srv.URL + "/v1", Profile: "ollama"})
	big := strings.Repeat("func f() { return }\n", 2000) // ~40 KB
	var notices []string
	on := func(e llm.Event) {
		if e.Type == llm.EventNotice {
			notices = append(notices, e.Text)
		}
	}
	for range 2 {
		r, err := p.Stream(context.Background(), &llm.Request{Model: "qwen3-coder", Messages: []llm.Message{llm.Text(llm.RoleUser, big)}}, on)
		if err != nil {
			t.Fatal(err)
		}
		if r.Usage.Prompt() < 9000 {
			t.Errorf("prompt counted as %d tokens, the server's truncated count", r.Usage.Prompt())
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "cut the prompt from the front") {
		t.Errorf("notices %q", notices)
	}
	// A prompt that fits is taken at the server's word.
	r, _ := p.Stream(context.Background(), &llm.Request{Model: "qwen3-coder", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, on)
	if b, _ := json.Marshal(r.Usage); r.Usage.Prompt() > 100 {
		t.Errorf("small prompt usage %s", b)
	}
}
