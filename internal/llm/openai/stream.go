package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/sse"
)

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens    *int `json:"prompt_cache_hit_tokens"` // DeepSeek
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// wireTimings is llama.cpp's own accounting, sent beside (or instead of)
// usage.
type wireTimings struct {
	CacheN     *int `json:"cache_n"`
	PromptN    int  `json:"prompt_n"`
	PredictedN int  `json:"predicted_n"`
}

// normUsage turns the server's counts into llm.Usage, with Input excluding
// cached tokens. The cached count comes from OpenAI's
// prompt_tokens_details.cached_tokens, else DeepSeek's
// prompt_cache_hit_tokens, else llama.cpp's timings.cache_n.
func normUsage(u *wireUsage, t *wireTimings) (llm.Usage, bool) {
	if u == nil && t == nil {
		return llm.Usage{}, false
	}
	if u == nil {
		// llama.cpp without usage: prompt = cached + evaluated.
		c := 0
		if t.CacheN != nil {
			c = *t.CacheN
		}
		return llm.Usage{Input: t.PromptN, CacheRead: c, Output: t.PredictedN}, true
	}
	cached := -1
	switch {
	case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil:
		cached = *u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		cached = *u.PromptCacheHitTokens
	case t != nil && t.CacheN != nil:
		cached = *t.CacheN
	}
	if cached < 0 || cached > u.PromptTokens {
		cached = 0
	}
	out := llm.Usage{Input: u.PromptTokens - cached, CacheRead: cached, Output: u.CompletionTokens}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 && d.ReasoningTokens <= u.CompletionTokens {
		out.Reasoning = d.ReasoningTokens
	}
	return out, true
}

type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // a string on OpenAI, a number elsewhere
}

func (e *wireError) code() (string, int) {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s, 0
	}
	var n int
	if json.Unmarshal(e.Code, &n) == nil {
		return "", n
	}
	return "", 0
}

type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *contentValue     `json:"content"`
			Refusal          *string           `json:"refusal"`
			ReasoningContent *string           `json:"reasoning_content"`
			Reasoning        *string           `json:"reasoning"`
			ReasoningDetails []json.RawMessage `json:"reasoning_details"`
			ToolCalls        []toolCallDelta   `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Timings *wireTimings `json:"timings"`
	Error   *wireError   `json:"error"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string    `json:"name"`
		Arguments argsValue `json:"arguments"`
	} `json:"function"`
	ExtraContent *extraContent `json:"extra_content"`
}

// argsValue is a tool call's arguments as a server sent them: a JSON string
// (the API's form) or, from some servers (Ollama, some vLLM parsers), the
// JSON object itself. Either is accepted; treating an object as an
// undecodable chunk would retry a complete reply as a cut stream.
type argsValue string

func (a *argsValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*a = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = argsValue(s)
	default:
		*a = argsValue(b)
	}
	return nil
}

type callState struct {
	id, name string
	sig      string // Gemini's thought signature
	args     strings.Builder
}

// addName merges a name delta. OpenAI sends the name once; some servers
// (vLLM tool parsers, NVIDIA NIM) repeat it in every delta, or send it
// growing, so a delta equal to or extending the name so far replaces it
// instead of being appended ("read_fileread_file").
func (c *callState) addName(n string) {
	switch {
	case n == "":
	case c.name == "" || strings.HasPrefix(n, c.name):
		c.name = n
	case strings.HasSuffix(c.name, n) && c.args.Len() > 0:
		// a repeat after arguments began: the name is complete
	default:
		c.name += n
	}
}

// accumulator builds a Reply from deltas; the streaming parser and the
// whole-response decoder share it.
type accumulator struct {
	onEvent  func(llm.Event)
	model    string
	thinking strings.Builder
	text     strings.Builder
	calls    []*callState
	byIndex  map[int]*callState
	finish   string
	usage    llm.Usage
	refusal  strings.Builder
	details  reasoningDetails
}

func newAccumulator(onEvent func(llm.Event)) *accumulator {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	return &accumulator{onEvent: onEvent, byIndex: map[int]*callState{}}
}

func (a *accumulator) addThinking(s string) {
	if s == "" {
		return
	}
	a.thinking.WriteString(s)
	a.onEvent(llm.Event{Type: llm.EventThinking, Text: s})
}

func (a *accumulator) addRefusal(s string) {
	if s == "" {
		return
	}
	a.refusal.WriteString(s)
	a.onEvent(llm.Event{Type: llm.EventText, Text: s})
}

// reasoningDetails merges OpenRouter's reasoning_details deltas: pieces of
// the same index are one detail whose text, summary and data strings
// concatenate, other fields taking the latest value. Details are kept as
// JSON objects so what goes back is what came.
type reasoningDetails struct {
	items []map[string]json.RawMessage
	index map[string]int
}

func (r *reasoningDetails) add(ds []json.RawMessage) {
	for _, d := range ds {
		var obj map[string]json.RawMessage
		if json.Unmarshal(d, &obj) != nil || obj == nil {
			continue
		}
		key := string(obj["index"])
		if key == "" {
			key = fmt.Sprintf("#%d", len(r.items))
		}
		if r.index == nil {
			r.index = map[string]int{}
		}
		i, ok := r.index[key]
		if !ok {
			r.index[key] = len(r.items)
			r.items = append(r.items, obj)
			continue
		}
		cur := r.items[i]
		for k, v := range obj {
			var add, old string
			if (k == "text" || k == "summary" || k == "data") && json.Unmarshal(v, &add) == nil && json.Unmarshal(cur[k], &old) == nil {
				joined, _ := json.Marshal(old + add)
				cur[k] = joined
				continue
			}
			if string(v) != "null" {
				cur[k] = v
			}
		}
	}
}

// json returns the merged details as a JSON array, nil when there are none.
// Keys are written sorted (encoding/json sorts map keys), so the same
// details always give the same bytes.
func (r *reasoningDetails) json() json.RawMessage {
	if len(r.items) == 0 {
		return nil
	}
	b, _ := json.Marshal(r.items)
	return b
}

func (a *accumulator) addText(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.onEvent(llm.Event{Type: llm.EventText, Text: s})
}

// addToolDelta merges one tool call delta. Deltas are keyed by index; a
// server that omits the index (older Ollama) sends whole calls, so a new id
// starts a new call and a delta without one continues the last.
func (a *accumulator) addToolDelta(d toolCallDelta) {
	var c *callState
	switch {
	case d.Index != nil:
		c = a.byIndex[*d.Index]
		if c == nil {
			c = &callState{}
			a.byIndex[*d.Index] = c
			a.calls = append(a.calls, c)
		}
	case d.ID == "" && len(a.calls) > 0:
		c = a.calls[len(a.calls)-1]
	default:
		c = &callState{}
		a.calls = append(a.calls, c)
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if x := d.ExtraContent; x != nil && x.Google.ThoughtSignature != "" {
		c.sig = x.Google.ThoughtSignature
	}
	c.addName(d.Function.Name)
	c.args.WriteString(string(d.Function.Arguments))
}

func (a *accumulator) reply() *llm.Reply {
	r := &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}, Model: a.model, Usage: a.usage}
	if a.thinking.Len() > 0 || len(a.details.items) > 0 {
		r.Message.Blocks = append(r.Message.Blocks, llm.Block{Type: llm.BlockThinking, Thinking: a.thinking.String(), ReasoningDetails: a.details.json()})
	}
	if a.refusal.Len() > 0 && a.text.Len() == 0 {
		// The model's explanation of a refusal is its visible answer.
		a.text.WriteString(a.refusal.String())
	}
	// A whitespace-only text (a newline before a tool call) is not kept:
	// stored, it would be re-sent, and Anthropic models behind a
	// compatible API reject whitespace-only text blocks.
	if strings.TrimSpace(a.text.String()) != "" {
		r.Message.Blocks = append(r.Message.Blocks, llm.Block{Type: llm.BlockText, Text: a.text.String()})
	}
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i) // some local servers send none
		}
		b := llm.Block{Type: llm.BlockToolUse, ID: id, Name: c.name, Input: toolJSON(c.args.String()), ThoughtSignature: c.sig}
		r.Message.Blocks = append(r.Message.Blocks, b)
	}
	r.StopReason = stopReason(a.finish, len(a.calls) > 0)
	if a.refusal.Len() > 0 && r.StopReason != llm.StopToolUse {
		r.StopReason = llm.StopRefusal
	}
	return r
}

// emitCalls reports the completed tool calls once the stream is over: with
// deltas keyed by index a call is only known complete at the end.
func (a *accumulator) emitCalls(r *llm.Reply) {
	for i := range r.Message.Blocks {
		if r.Message.Blocks[i].Type == llm.BlockToolUse {
			b := r.Message.Blocks[i]
			a.onEvent(llm.Event{Type: llm.EventToolCall, Block: &b})
		}
	}
}

var emptyObject = json.RawMessage(`{}`)

// toolJSON returns the arguments string as a block input: {} when empty,
// the JSON itself when valid, else a JSON string holding the raw text so the
// stored block stays valid JSON and the tool reports the error.
func toolJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return emptyObject
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	q, _ := json.Marshal(s)
	return q
}

func stopReason(finish string, hasCalls bool) llm.StopReason {
	if hasCalls && (finish == "stop" || finish == "tool_calls" || finish == "function_call" || finish == "") {
		// Some local servers say "stop" after calling tools.
		return llm.StopToolUse
	}
	switch finish {
	case "stop", "end_turn":
		return llm.StopEnd
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length", "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "content_filter", "refusal":
		return llm.StopRefusal
	}
	return llm.StopOther
}

var done = []byte("[DONE]")

// parseStream reads a Chat Completions SSE stream into a Reply. The stream
// is complete at data: [DONE], or at a clean end after a finish_reason
// (some servers omit [DONE]); anything else is a cut stream.
func parseStream(r io.Reader, onEvent func(llm.Event)) (*llm.Reply, error) {
	a := newAccumulator(onEvent)
	sr := sse.NewReader(r)
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if a.finish != "" {
					break
				}
				return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "stream ended before a finish reason"}
			}
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Err: err}
		}
		data := bytes.TrimSpace(ev.Data)
		if bytes.Equal(data, done) {
			if a.finish == "" && a.text.Len() == 0 && len(a.calls) == 0 && a.thinking.Len() == 0 {
				return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "stream ended without a reply"}
			}
			break
		}
		if len(data) == 0 {
			continue
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "undecodable chunk", Err: err}
		}
		if c.Error != nil {
			return nil, chunkError(c.Error)
		}
		if ev.Name == "error" {
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: string(data)}
		}
		a.chunk(&c)
	}
	reply := a.reply()
	a.emitCalls(reply)
	return reply, nil
}

func (a *accumulator) chunk(c *chunk) {
	if c.Model != "" {
		a.model = c.Model
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		d := ch.Delta
		if d.ReasoningContent != nil {
			a.addThinking(*d.ReasoningContent)
		} else if d.Reasoning != nil {
			a.addThinking(*d.Reasoning)
		}
		if d.Content != nil {
			a.addThinking(d.Content.thinking)
			a.addText(d.Content.text)
		}
		if d.Refusal != nil {
			a.addRefusal(*d.Refusal)
		}
		a.details.add(d.ReasoningDetails)
		for _, tc := range d.ToolCalls {
			a.addToolDelta(tc)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	if u, ok := normUsage(c.Usage, c.Timings); ok {
		a.usage = u
	}
}

// chunkError classifies an error object sent in the stream or in a 200
// JSON body (OpenRouter and vLLM do this).
func chunkError(we *wireError) *llm.Error {
	code, status := we.code()
	e := &llm.Error{Status: status, Message: we.Message}
	switch {
	case llm.IsContextTooLong(we.Type+" "+code, we.Message):
		e.Kind = llm.ErrContextTooLong
	case status == 429 || code == "rate_limit_exceeded":
		e.Kind = llm.ErrRateLimit
	case status == 401 || status == 403:
		e.Kind = llm.ErrAuth
	case status >= 400 && status < 500:
		e.Kind = llm.ErrBadRequest
	default:
		// A failure mid-generation is most likely the server's.
		e.Kind = llm.ErrOverloaded
	}
	return e
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content          *contentValue     `json:"content"`
			Refusal          *string           `json:"refusal"`
			ReasoningContent *string           `json:"reasoning_content"`
			Reasoning        *string           `json:"reasoning"`
			ReasoningDetails []json.RawMessage `json:"reasoning_details"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string    `json:"name"`
					Arguments argsValue `json:"arguments"`
				} `json:"function"`
				ExtraContent *extraContent `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Timings *wireTimings `json:"timings"`
	Error   *wireError   `json:"error"`
}

// DecodeResponse decodes a whole, non-streamed Chat Completions response.
// Stream uses it when a server answers with application/json instead of
// SSE; onEvent (may be nil) receives the events a stream would have sent.
func DecodeResponse(body []byte, onEvent func(llm.Event)) (*llm.Reply, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &llm.Error{Kind: llm.ErrUnknown, Message: "undecodable response", Err: err}
	}
	if w.Error != nil {
		return nil, chunkError(w.Error)
	}
	a := newAccumulator(onEvent)
	a.model = w.Model
	for _, ch := range w.Choices {
		if ch.Index != 0 {
			continue
		}
		m := ch.Message
		if m.ReasoningContent != nil {
			a.addThinking(*m.ReasoningContent)
		} else if m.Reasoning != nil {
			a.addThinking(*m.Reasoning)
		}
		if m.Content != nil {
			a.addThinking(m.Content.thinking)
			a.addText(m.Content.text)
		}
		if m.Refusal != nil {
			a.addRefusal(*m.Refusal)
		}
		a.details.add(m.ReasoningDetails)
		for i, tc := range m.ToolCalls {
			idx := i
			d := toolCallDelta{Index: &idx, ID: tc.ID, ExtraContent: tc.ExtraContent}
			d.Function.Name, d.Function.Arguments = tc.Function.Name, tc.Function.Arguments
			a.addToolDelta(d)
		}
		a.finish = ch.FinishReason
	}
	if u, ok := normUsage(w.Usage, w.Timings); ok {
		a.usage = u
	}
	reply := a.reply()
	a.emitCalls(reply)
	return reply, nil
}
