package anthropic_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// A reply's reasoning blocks, an empty one (display "omitted") and a
// redacted one included, go back byte for byte.
func TestThinkingBlocksRoundTrip(t *testing.T) {
	stream := strings.Join([]string{
		`event: message_start
data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":5,"output_tokens":1},"input_transformations":[{"type":"thinking_dropped","path":"messages.1.content.0","reason":"prefix_mismatch"},{"type":"thinking_mismatch_allowed","path":"messages.3.content.0","reason":"prefix_mismatch"}]}}`,
		`event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnLW9m"}}`,
		`event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"LWVtcHR5"}}`,
		`event: content_block_stop
data: {"type":"content_block_stop","index":0}`,
		`event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
		`event: content_block_stop
data: {"type":"content_block_stop","index":1}`,
		`event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"ok"}}`,
		`event: content_block_stop
data: {"type":"content_block_stop","index":2}`,
		`event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}`,
		`event: message_stop
data: {"type":"message_stop"}`,
	}, "\n\n") + "\n\n"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(stream))
	}))
	defer hs.Close()
	p := anthropic.New(anthropic.Config{BaseURL: hs.URL})
	reply, err := p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.Text(llm.RoleUser, "go")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		{Type: llm.BlockThinking, Signature: "c2lnLW9mLWVtcHR5"},
		{Type: llm.BlockRedactedThinking, Data: "EmwKAhgBEgy3va3pzix/LafPsn4a"},
		{Type: llm.BlockText, Text: "ok"},
	}
	if !reflect.DeepEqual(reply.Message.Blocks, want) {
		t.Fatalf("blocks %+v", reply.Message.Blocks)
	}
	if want := []string{"messages.1.content.0: prefix_mismatch"}; !reflect.DeepEqual(reply.Dropped, want) {
		t.Errorf("dropped %v, want %v", reply.Dropped, want)
	}
	body, err := p.MarshalRequest(&llm.Request{Messages: []llm.Message{llm.Text(llm.RoleUser, "go"), reply.Message, llm.Text(llm.RoleUser, "next")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`{"type":"thinking","thinking":"","signature":"c2lnLW9mLWVtcHR5"}`,
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}`,
	} {
		if !strings.Contains(string(body), s) {
			t.Errorf("re-sent body lacks %s:\n%s", s, body)
		}
	}
}

func TestThinkingParameter(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	for _, tc := range []struct {
		name string
		th   llm.Thinking
		max  int
		want string // a fragment of the body, "" for no thinking parameter
	}{
		{"default", llm.Thinking{}, 0, ""},
		{"off", llm.Thinking{Mode: llm.ThinkingOff, Effort: "low"}, 0, `"stream":true,"thinking":{"type":"disabled"},"messages"`},
		{"adaptive", llm.Thinking{Mode: llm.ThinkingAdaptive, Effort: "high", Summarized: true}, 0,
			`"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high"}`},
		{"budget", llm.Thinking{Mode: llm.ThinkingBudget, Budget: 4000}, 16000, `"max_tokens":16000,"stream":true,"thinking":{"type":"enabled","budget_tokens":4000}`},
		// budget_tokens must be at least 1024 and below max_tokens.
		{"budget raised", llm.Thinking{Mode: llm.ThinkingBudget, Budget: 10}, 0, `"max_tokens":8192,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024}`},
		{"max tokens raised", llm.Thinking{Mode: llm.ThinkingBudget, Budget: 20000}, 16000, `"max_tokens":28192,"stream":true,"thinking":{"type":"enabled","budget_tokens":20000}`},
		{"drop block", llm.Thinking{DropBlock: true}, 0, `"thinking":{"type":"adaptive","block_binding":{"prefix_mismatch_behavior":"drop_block"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := p.MarshalRequest(&llm.Request{MaxTokens: tc.max, Thinking: tc.th, Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if strings.Contains(string(body), "thinking") || strings.Contains(string(body), "output_config") {
					t.Errorf("body has a thinking parameter: %s", body)
				}
				return
			}
			if !strings.Contains(string(body), tc.want) {
				t.Errorf("body lacks %s:\n%s", tc.want, body)
			}
			if strings.Contains(string(body), "temperature") {
				t.Errorf("temperature sent with thinking: %s", body)
			}
		})
	}
}

// drop_block only works with its beta header, sent only when asked for.
func TestDropBlockBetaHeader(t *testing.T) {
	var got []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("anthropic-beta"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"message","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	defer hs.Close()
	p := anthropic.New(anthropic.Config{BaseURL: hs.URL})
	for _, drop := range []bool{true, false} {
		if _, err := p.Stream(context.Background(), &llm.Request{Thinking: llm.Thinking{DropBlock: drop}, Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, []string{anthropic.BetaThinkingBinding, ""}) {
		t.Errorf("anthropic-beta headers %q", got)
	}
}

// The thinking share of output (usage.output_tokens_details.thinking_tokens,
// reported by Claude 5 models) arrives as Usage.Reasoning, inside Output,
// in a stream and in a whole JSON reply.
func TestThinkingTokensInUsage(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply{Thinking: "plan", Text: "ok", JSON: asJSON, Usage: llm.Usage{Input: 10, Output: 900, Reasoning: 700}})
		p := anthropic.New(anthropic.Config{BaseURL: srv.URL})
		reply, err := p.Stream(context.Background(), &llm.Request{Model: "claude-sonnet-5-5", MaxTokens: 2000, Messages: []llm.Message{llm.Text(llm.RoleUser, "go")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Usage.Reasoning != 700 || reply.Usage.Output != 900 {
			t.Errorf("json %v: usage %+v, want 700 reasoning of 900 output", asJSON, reply.Usage)
		}
	}
}
