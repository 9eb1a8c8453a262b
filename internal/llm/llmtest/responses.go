package llmtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/harness-dev/harness/internal/llm"
)

// FormatResponses is OpenAI's Responses API (POST …/responses).
const FormatResponses Format = "responses"

// The Responses API's own error messages, each as OpenAI's server words it
// in other clients' bug reports (all 400 invalid_request_error, param
// "input" unless said otherwise):
//
//	following item  continuedev/continue#8933, vercel/ai#7099, openai/openai-node#1567
//	missing reasoning continuedev/continue#12620 ("'message' was provided without its required 'reasoning' item")
//	no tool output  anomalyco/opencode#16717, Azure/azure-sdk-for-python#46092
//	no tool call    james-6-23/codex2api#414
//	not persisted   vercel/ai#8031 (store: false, no encrypted_content)
//	summary         newo-ether/Agora#141 ("missing required field `summary`")
//	context window  openai/codex's context_length_exceeded handling
const (
	respFollowing    = "Item '%s' of type 'reasoning' was provided without its required following item."
	respNoReasoning  = "Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'."
	respNoOutput     = "No tool output found for function call %s."
	respNoCall       = "No tool call found for function call output with call_id %s."
	respNotPersisted = "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
	respUnverified   = "The encrypted content for item %s could not be verified."
	respMissing      = "Missing required parameter: '%s'."
	respUnknownParam = "Unknown parameter: '%s'."
	respContext      = "Your input exceeds the context window of this model. Please adjust your input and try again."
)

// responsesState is what the fake issued: each reasoning item's encrypted
// content and the id of the item that followed it, so a later request can
// be checked as the real server checks it.
type responsesState struct {
	served    int
	encrypted map[string]string // rs id -> encrypted_content
	following map[string]string // rs id -> id of the next output item
	reasonOf  map[string]string // message / function_call id -> its rs id
}

// respStates keeps each Server's Responses state beside it, so the shared
// Server struct needs no field of its own.
var respStates sync.Map // *Server -> *responsesState

// respServed numbers replies across every fake server of the process, so
// no two servers issue the same item id (as no two real accounts do).
var respServed atomic.Int64

func (s *Server) responses() *responsesState {
	v, _ := respStates.LoadOrStore(s, &responsesState{encrypted: map[string]string{}, following: map[string]string{}, reasonOf: map[string]string{}})
	return v.(*responsesState)
}

// respRequest is a Responses request body. Unknown top-level fields are an
// error, as on the real API.
type respRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions"`
	Input           json.RawMessage   `json:"input"`
	MaxOutputTokens int               `json:"max_output_tokens"`
	Stream          bool              `json:"stream"`
	Store           *bool             `json:"store"`
	Include         []string          `json:"include"`
	PromptCacheKey  string            `json:"prompt_cache_key"`
	Reasoning       *respReasoning    `json:"reasoning"`
	Tools           []json.RawMessage `json:"tools"`
	ToolChoice      json.RawMessage   `json:"tool_choice"`
	ParallelTools   *bool             `json:"parallel_tool_calls"`
	Temperature     *float64          `json:"temperature"`
	Text            json.RawMessage   `json:"text"`
	PreviousID      string            `json:"previous_response_id"`
	Metadata        json.RawMessage   `json:"metadata"`
	Truncation      string            `json:"truncation"`
}

type respReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// respItem is an input item, decoded loosely; raw keeps its bytes.
type respItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`

	raw json.RawMessage // the item as sent
}

func respError(msg, param, code string) string {
	e := obj{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	return jsonString(obj{"error": e})
}

// decodeResponses reads a Responses body into the neutral Request view and
// checks it as the API does; errBody is the 400 body when it fails.
func (s *Server) decodeResponses(body []byte) (req Request, w respRequest, items []respItem, errBody string) {
	req = Request{Body: body, Format: FormatResponses}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		req.DecodeErr = err
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			return req, w, nil, respError(fmt.Sprintf(respUnknownParam, f), f, "unknown_parameter")
		}
		return req, w, nil, respError("We could not parse the JSON body of your request. "+err.Error(), "", "")
	}
	req.Model, req.Stream, req.MaxTokens, req.System = w.Model, w.Stream, w.MaxOutputTokens, w.Instructions
	for _, t := range w.Tools {
		var tool struct{ Type, Name string }
		_ = json.Unmarshal(t, &tool)
		req.Tools = append(req.Tools, tool.Name)
	}
	if w.Model == "" {
		return req, w, nil, respError(fmt.Sprintf(respMissing, "model"), "model", "missing_required_parameter")
	}
	var str string
	var raws []json.RawMessage
	if json.Unmarshal(w.Input, &str) == nil {
		items = []respItem{{Type: "message", Role: "user", Content: json.RawMessage(jsonString(str))}}
	} else if err := json.Unmarshal(w.Input, &raws); err != nil {
		return req, w, nil, respError("Invalid type for 'input': expected a string or an array of input items.", "input", "invalid_type")
	}
	for i, raw := range raws {
		var it respItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return req, w, nil, respError(fmt.Sprintf("Invalid type for 'input[%d]': expected an input item.", i), fmt.Sprintf("input[%d]", i), "invalid_type")
		}
		it.raw = raw
		items = append(items, it)
	}
	if e := s.checkItems(w, items); e != "" {
		return req, w, items, e
	}
	req.Messages, req.Reminder = respMessages(items)
	return req, w, items, ""
}

// checkItems enforces the pairing rules of input items.
func (s *Server) checkItems(w respRequest, items []respItem) string {
	st := s.responses()
	store := w.Store == nil || *w.Store
	calls := map[string]bool{}
	outputs := map[string]bool{}
	for _, it := range items {
		if it.Type == "function_call_output" {
			outputs[it.CallID] = true
		}
	}
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		if it.Type == "" && it.Role != "" {
			it.Type = "message"
		}
		switch it.Type {
		case "message":
			if it.Role == "" {
				return respError(fmt.Sprintf(respMissing, param+".role"), param+".role", "missing_required_parameter")
			}
		case "reasoning":
			if len(it.Summary) == 0 {
				return respError(fmt.Sprintf(respMissing, param+".summary"), param+".summary", "missing_required_parameter")
			}
			enc := it.EncryptedContent
			if enc == nil || *enc == "" {
				if !store {
					return respError(fmt.Sprintf(respNotPersisted, it.ID), "input", "")
				}
			} else if want, ok := st.encrypted[it.ID]; !ok || want != *enc {
				return respError(fmt.Sprintf(respUnverified, it.ID), "input", "invalid_encrypted_content")
			}
			if next := st.following[it.ID]; next != "" && (i+1 >= len(items) || items[i+1].ID != next) {
				return respError(fmt.Sprintf(respFollowing, it.ID), "input", "")
			}
		case "function_call":
			if it.CallID == "" {
				return respError(fmt.Sprintf(respMissing, param+".call_id"), param+".call_id", "missing_required_parameter")
			}
			calls[it.CallID] = true
			if !outputs[it.CallID] {
				return respError(fmt.Sprintf(respNoOutput, it.CallID), "input", "")
			}
		case "function_call_output":
			if !calls[it.CallID] {
				return respError(fmt.Sprintf(respNoCall, it.CallID), "input", "")
			}
		default:
			return respError(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'reasoning', 'function_call' and 'function_call_output'.", it.Type), param+".type", "invalid_value")
		}
		if rs := st.reasonOf[it.ID]; rs != "" && (i == 0 || items[i-1].ID != rs) {
			return respError(fmt.Sprintf(respNoReasoning, it.ID, it.Type, rs), "input", "")
		}
	}
	return ""
}

// respText is a message's text: a string, or its text parts joined.
func respText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// respMessages is the neutral view of input items: tool outputs and user
// text in user messages, reasoning, text and calls in assistant ones. A
// final user message right after another user message or a tool output is
// the reminder.
func respMessages(items []respItem) ([]llm.Message, string) {
	reminder := ""
	if n := len(items); n >= 2 && items[n-1].Role == "user" && (items[n-2].Role == "user" || items[n-2].Type == "function_call_output") {
		reminder = respText(items[n-1].Content)
		items = items[:n-1]
	}
	var out []llm.Message
	open := func(role llm.Role) *llm.Message {
		if n := len(out); n > 0 && out[n-1].Role == role {
			return &out[n-1]
		}
		out = append(out, llm.Message{Role: role})
		return &out[len(out)-1]
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call_output":
			m := open(llm.RoleUser)
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: it.CallID, Content: respText(it.Output)})
		case it.Role == "user":
			m := open(llm.RoleUser)
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockText, Text: respText(it.Content)})
		case it.Type == "reasoning":
			m := open(llm.RoleAssistant)
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockThinking, Item: it.raw})
		case it.Role == "assistant":
			m := open(llm.RoleAssistant)
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockText, Text: respText(it.Content)})
		case it.Type == "function_call":
			m := open(llm.RoleAssistant)
			in := json.RawMessage(it.Arguments)
			if !json.Valid(in) {
				in = json.RawMessage(jsonString(it.Arguments))
			}
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolUse, ID: it.CallID, Name: it.Name, Input: in})
		}
	}
	return out, reminder
}

// encrypt is the fake's encrypted_content for a reasoning item: bound to
// its id and summary, so an altered item fails verification.
func encrypt(id, summary string) string {
	m := hmac.New(sha256.New, []byte("llmtest-responses"))
	m.Write([]byte(id + "\x00" + summary))
	return "gAAAAB" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// serveResponses answers POST …/responses.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, wr, _, errBody := s.decodeResponses(body)
	req.Method, req.Path, req.Header = r.Method, r.URL.Path, r.Header.Clone()

	s.mu.Lock()
	limit, count := s.limit, s.count
	if count != nil {
		req.Tokens = count(body)
	}
	s.reqs = append(s.reqs, req)
	if obs := s.observe; obs != nil {
		s.mu.Unlock()
		obs(req)
		s.mu.Lock()
	}
	if errBody != "" {
		s.mu.Unlock()
		httpError(w, http.StatusBadRequest, errBody)
		return
	}
	var reply Reply
	switch {
	case len(s.queue) > 0:
		reply, s.queue = s.queue[0], s.queue[1:]
	case s.handler != nil:
		h := s.handler
		s.mu.Unlock()
		reply = h(req)
		s.mu.Lock()
	default:
		reply = Reply{Text: DefaultText}
	}
	if limit > 0 && req.Tokens > limit {
		s.mu.Unlock()
		httpError(w, http.StatusBadRequest, respError(respContext, "input", "context_length_exceeded"))
		return
	}
	if count != nil && reply.Usage == (llm.Usage{}) {
		reply.Usage = llm.Usage{Input: req.Tokens, Output: 1 + len(reply.Text)/4}
	}
	out := s.respOutput(reply, wr)
	s.mu.Unlock()

	if reply.RetryAfter != "" {
		w.Header().Set("retry-after", reply.RetryAfter)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		eb := reply.ErrorBody
		if eb == "" {
			eb = defaultErrorBody(FormatOpenAI, reply.Status)
		}
		httpError(w, reply.Status, eb)
		return
	}
	resp := respObject(reply, wr, out, "completed")
	if reply.JSON || !wr.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(jsonString(resp)))
		return
	}
	s.stream(r.Context(), w, respStream(reply, wr, out), reply)
}

// respOutput builds the reply's output items, and records what a later
// request must send back: a reasoning item (always, for a model asked to
// reason, as GPT-5 gives one even when it shows nothing), the message,
// the function calls. Called with s.mu held.
func (s *Server) respOutput(r Reply, w respRequest) []obj {
	st := s.responses()
	st.served++
	n := respServed.Add(1)
	var out []obj
	rsID := ""
	if w.Reasoning != nil || r.Thinking != "" {
		rsID = fmt.Sprintf("rs_fake%02d", n)
		summary := []any{}
		if r.Thinking != "" && w.Reasoning != nil && w.Reasoning.Summary != "" {
			summary = append(summary, obj{"type": "summary_text", "text": r.Thinking})
		}
		item := obj{"id": rsID, "type": "reasoning", "summary": summary}
		// Only asked for does the item carry its reasoning: without it, and
		// without store, the item cannot be sent back (respNotPersisted).
		for _, inc := range w.Include {
			if inc == "reasoning.encrypted_content" {
				enc := encrypt(rsID, r.Thinking)
				item["encrypted_content"] = enc
				st.encrypted[rsID] = enc
			}
		}
		out = append(out, item)
	}
	if r.Text != "" {
		out = append(out, obj{"id": fmt.Sprintf("msg_fake%02d", n), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{obj{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": r.Text}}})
	}
	for i, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_fake%02d_%d", n, i)
		}
		out = append(out, obj{"id": fmt.Sprintf("fc_fake%02d_%d", n, i), "type": "function_call", "status": "completed",
			"arguments": c.Input, "call_id": id, "name": c.Name})
	}
	if rsID != "" && len(out) > 1 {
		next := out[1]["id"].(string)
		st.following[rsID] = next
		st.reasonOf[next] = rsID
	}
	return out
}

// respObject is the Response object for a reply.
func respObject(r Reply, w respRequest, output []obj, status string) obj {
	u := r.Usage
	prompt := u.Input + u.CacheRead + u.CacheWrite
	resp := obj{"id": "resp_fake", "object": "response", "created_at": 1782321698, "status": status,
		"error": nil, "incomplete_details": nil, "model": w.Model + "-2025-08-07", "output": output,
		"store": w.Store == nil || *w.Store, "usage": nil}
	if status == "completed" || status == "incomplete" {
		resp["usage"] = obj{"input_tokens": prompt, "input_tokens_details": obj{"cached_tokens": u.CacheRead},
			"output_tokens": u.Output, "output_tokens_details": obj{"reasoning_tokens": u.Reasoning}, "total_tokens": prompt + u.Output}
	}
	if status == "completed" && stopReason(r) == string(llm.StopMaxTokens) {
		resp["status"] = "incomplete"
		resp["incomplete_details"] = obj{"reason": "max_output_tokens"}
	}
	return resp
}

// respStream is the event stream for a reply, shaped as OpenAI's server
// sends it (compare testdata/providers/TestOpenAIResponsesCommon).
func respStream(r Reply, w respRequest, output []obj) []string {
	seq := 0
	ev := func(typ string, o obj) string {
		o["type"] = typ
		o["sequence_number"] = seq
		seq++
		return "event: " + typ + "\ndata: " + jsonString(o) + "\n\n"
	}
	out := []string{
		ev("response.created", obj{"response": respObject(r, w, []obj{}, "in_progress")}),
		ev("response.in_progress", obj{"response": respObject(r, w, []obj{}, "in_progress")}),
	}
	for i, item := range output {
		id := item["id"].(string)
		switch item["type"] {
		case "reasoning":
			out = append(out, ev("response.output_item.added", obj{"output_index": i, "item": obj{"id": id, "type": "reasoning", "summary": []any{}}}))
			for si, sp := range item["summary"].([]any) {
				text := sp.(obj)["text"].(string)
				out = append(out, ev("response.reasoning_summary_part.added", obj{"item_id": id, "output_index": i, "summary_index": si, "part": obj{"type": "summary_text", "text": ""}}))
				for _, p := range pieces(text) {
					out = append(out, ev("response.reasoning_summary_text.delta", obj{"item_id": id, "output_index": i, "summary_index": si, "delta": p}))
				}
				out = append(out, ev("response.reasoning_summary_text.done", obj{"item_id": id, "output_index": i, "summary_index": si, "text": text}))
			}
		case "message":
			text := item["content"].([]any)[0].(obj)["text"].(string)
			out = append(out, ev("response.output_item.added", obj{"output_index": i, "item": obj{"id": id, "type": "message", "status": "in_progress", "content": []any{}, "role": "assistant"}}))
			out = append(out, ev("response.content_part.added", obj{"item_id": id, "output_index": i, "content_index": 0, "part": obj{"type": "output_text", "annotations": []any{}, "text": ""}}))
			for _, p := range pieces(text) {
				out = append(out, ev("response.output_text.delta", obj{"item_id": id, "output_index": i, "content_index": 0, "delta": p, "logprobs": []any{}}))
			}
			out = append(out, ev("response.output_text.done", obj{"item_id": id, "output_index": i, "content_index": 0, "text": text}))
		case "function_call":
			args := item["arguments"].(string)
			out = append(out, ev("response.output_item.added", obj{"output_index": i, "item": obj{"id": id, "type": "function_call", "status": "in_progress",
				"arguments": "", "call_id": item["call_id"], "name": item["name"]}}))
			for _, p := range pieces(args) {
				out = append(out, ev("response.function_call_arguments.delta", obj{"item_id": id, "output_index": i, "delta": p}))
			}
			out = append(out, ev("response.function_call_arguments.done", obj{"item_id": id, "output_index": i, "arguments": args}))
		}
		out = append(out, ev("response.output_item.done", obj{"output_index": i, "item": item}))
	}
	if r.StreamError != "" {
		failed := respObject(r, w, output, "failed")
		failed["error"] = obj{"code": "server_error", "message": r.StreamError}
		return append(out, ev("response.failed", obj{"response": failed}))
	}
	final := respObject(r, w, output, "completed")
	typ := "response.completed"
	if final["status"] == "incomplete" {
		typ = "response.incomplete"
	}
	return append(out, ev(typ, obj{"response": final}))
}
