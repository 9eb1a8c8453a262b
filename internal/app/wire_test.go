package app

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestWireAPI: WIRE_API chooses the OpenAI format the session speaks; unset
// on a compatible server it stays Chat Completions.
func TestWireAPI(t *testing.T) {
	for _, tt := range []struct{ wire, path string }{{"responses", "/v1/responses"}, {"chat", "/v1/chat/completions"}, {"", "/v1/chat/completions"}} {
		t.Run("WIRE_API="+tt.wire, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			o := testOptions(t)
			o.Source.Env["PROVIDER"], o.Source.Env["MODEL"], o.Source.Env["BASE_URL"] = "openai", "gpt-5", srv.URL+"/v1"
			o.Source.Env["WIRE_API"] = tt.wire
			s, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, err := s.Provider.Stream(context.Background(), &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
			if err != nil || !strings.Contains(r.Message.PlainText(), "no scripted reply") {
				t.Fatalf("%+v, %v", r, err)
			}
			if got := srv.Requests()[0].Path; got != tt.path {
				t.Errorf("posted to %s, want %s", got, tt.path)
			}
		})
	}
}
