package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
)

// asker is a session's answers to elicitation and sampling, recording
// what it was asked.
type asker struct {
	mu      sync.Mutex
	forms   []*Elicitation
	samples []*Sampling
	answer  ElicitAnswer
	reject  bool
}

func (a *asker) elicit(_ context.Context, q *Elicitation) (ElicitAnswer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forms = append(a.forms, q)
	return a.answer, nil
}

func (a *asker) sample(_ context.Context, r *Sampling) (*Sampled, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.samples = append(a.samples, r)
	if a.reject {
		return nil, fmt.Errorf("%w: not now", ErrSampleRejected)
	}
	return &Sampled{Text: "hello " + r.Messages[0].Text, Model: "test-model", StopReason: "endTurn"}, nil
}

// TestElicitAndSample: a server built with the SDK asks the user (an
// elicitation) and the model (a sampling request) during a tool call,
// over stdio at the newest revision (the requests ride in the call's
// result, SEP-2322) and over HTTP+SSE at 2024-11-05 (requests to the
// client); harness declares both once the session answers them, shows
// the form's fields in order with their defaults, lets the SDK fill in
// the defaults of fields the answer leaves out, caps maxTokens, and
// refuses tool use and a rejected request with clear errors.
func TestElicitAndSample(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	srv := mcptest.Server("full")
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(sse.Close)
	a := &asker{answer: ElicitAnswer{Action: ElicitAccept, Content: map[string]any{"name": "Ann", "age": nil}}}
	m := start(t, sb, Options{Elicit: a.elicit, Sample: a.sample}, f.goServer("go", "full"), Server{Name: "old", Type: "sse", URL: sse.URL, Scope: ScopeUser})
	ts := m.Tools(false)
	for _, server := range []string{"go", "old"} {
		t.Run(server, func(t *testing.T) {
			*a = asker{answer: a.answer}
			res := run(t, ts, "mcp__"+server+"__ask", `{"text":"Who are you?"}`)
			want := `action: accept content: {"age":30,"color":"g","name":"Ann","subscribe":true}`
			if res.IsError || res.Content != want {
				t.Errorf("ask: %q, want %q", res.Content, want)
			}
			if len(a.forms) != 1 {
				t.Fatalf("%d forms shown", len(a.forms))
			}
			q := a.forms[0]
			var got []string
			for _, fl := range q.Fields {
				got = append(got, fmt.Sprintf("%s %s %q req=%v", fl.Name, fl.Type, fl.DefaultText(), fl.Required))
			}
			wantFields := []string{`name string "" req=true`, `age integer "30" req=false`, `color string "g" req=false`, `subscribe boolean "true" req=false`}
			if q.Server != server || q.Message != "Who are you?" || !reflect.DeepEqual(got, wantFields) {
				t.Errorf("form: %s %q %q", q.Server, q.Message, got)
			}
			if c := q.Fields[2].Options; len(c) != 2 || c[1] != (Choice{Value: "g", Title: "Green"}) {
				t.Errorf("color's options: %+v", c)
			}

			res = run(t, ts, "mcp__"+server+"__sample", `{"text":"world","maxTokens":100000}`)
			if res.IsError || res.Content != "model: test-model stop: endTurn text: hello world" {
				t.Errorf("sample: %+v", res)
			}
			if len(a.samples) != 1 || a.samples[0].MaxTokens != MaxSampleTokens || a.samples[0].Asked != 100000 || a.samples[0].System != "Be brief." ||
				!reflect.DeepEqual(a.samples[0].Messages, []SampleMessage{{Role: "user", Text: "world"}}) {
				t.Errorf("the sampling request: %+v", a.samples)
			}
			if s := a.samples[0].Summary(); !strings.Contains(s, "up to 4096 tokens (it asked for 100000; harness caps it)") || !strings.Contains(s, "system: Be brief.\nuser: world") {
				t.Errorf("summary: %q", s)
			}

			res = run(t, ts, "mcp__"+server+"__sample", `{"text":"x","tools":true}`)
			if !res.IsError || !strings.Contains(res.Content, "does not support tool use in sampling") || len(a.samples) != 1 {
				t.Errorf("sampling with tools: %+v (%d asked)", res, len(a.samples))
			}
			a.reject = true
			res = run(t, ts, "mcp__"+server+"__sample", `{"text":"x"}`)
			if !res.IsError || !strings.Contains(res.Content, "user rejected sampling request: not now") {
				t.Errorf("rejected sampling: %+v", res)
			}
			a.answer = ElicitAnswer{Action: ElicitDecline}
			res = run(t, ts, "mcp__"+server+"__ask", `{"text":"again?"}`)
			if res.IsError || res.Content != "action: decline content: null" {
				t.Errorf("declined: %+v", res)
			}
			a.answer = ElicitAnswer{Action: ElicitAccept, Content: map[string]any{"name": "Ann", "age": nil}}
		})
	}
}

// TestFieldParse: what a user types becomes the value the schema asks
// for, or an error that says what to type.
func TestFieldParse(t *testing.T) {
	lo, hi := 1.0, 3.0
	enum := []Choice{{"r", "Red"}, {"g", "Green"}}
	for _, tc := range []struct {
		f    Field
		in   string
		want any
		err  string
	}{
		{Field{Type: "string"}, " hi ", "hi", ""},
		{Field{Type: "string"}, "", nil, ""},
		{Field{Type: "string", Required: true}, " ", nil, "required"},
		{Field{Type: "string", Min: &lo, Max: &hi}, "abcd", nil, "the length must be at most 3"},
		{Field{Type: "string", Options: enum}, "Green", "g", ""},
		{Field{Type: "string", Options: enum}, "1", "r", ""},
		{Field{Type: "string", Options: enum}, "blue", nil, `"blue" is not one of: r, g`},
		{Field{Type: "integer"}, "42", 42.0, ""},
		{Field{Type: "integer"}, "4.5", nil, "whole number"},
		{Field{Type: "number", Min: &lo}, "0.5", nil, "at least 1"},
		{Field{Type: "number"}, "x", nil, "type a number"},
		{Field{Type: "boolean"}, "Yes", true, ""},
		{Field{Type: "boolean"}, "n", false, ""},
		{Field{Type: "boolean"}, "maybe", nil, "yes or no"},
		{Field{Type: "array", Options: enum, Max: &lo}, "r, Green", nil, "the number of choices must be at most 1"},
		{Field{Type: "array", Options: enum}, "r, Green, r", []any{"r", "g"}, ""},
	} {
		got, err := tc.f.Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v %q: %v, want an error with %q", tc.f, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v %q: %#v %v, want %#v", tc.f, tc.in, got, err, tc.want)
		}
	}
}

// TestElicitRefused: a schema harness cannot show (a nested object) is
// an error to the server, and the user is told; a URL-mode request is
// declined.
func TestElicitRefused(t *testing.T) {
	var told []string
	m := &Manager{o: Options{Notify: func(s string) { told = append(told, s) }, Elicit: func(context.Context, *Elicitation) (ElicitAnswer, error) {
		return ElicitAnswer{}, errors.New("not asked")
	}}}
	c := &conn{def: Server{Name: "s"}, m: m}
	_, err := m.elicit(context.Background(), c, &sdk.ElicitRequest{Params: &sdk.ElicitParams{Message: "m",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"o": map[string]any{"type": "object"}}}}})
	if err == nil || !strings.Contains(err.Error(), `its field "o" is of type "object"`) || len(told) != 1 {
		t.Errorf("nested: %v %q", err, told)
	}
	res, err := m.elicit(context.Background(), c, &sdk.ElicitRequest{Params: &sdk.ElicitParams{Mode: "url", URL: "https://example.com", Message: "m"}})
	if err != nil || res.Action != ElicitDecline || len(told) != 2 {
		t.Errorf("url mode: %+v %v %q", res, err, told)
	}
}
