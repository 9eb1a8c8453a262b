package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// ToolCall is a scripted tool call. Input is raw JSON and may be invalid on
// purpose.
type ToolCall struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	Input string `json:"input,omitempty"`
}

// Reply scripts one answer of the fake server.
type Reply struct {
	Text      string     `json:"text,omitempty"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     llm.Usage  `json:"usage,omitzero"`

	// Status, when not 0 or 200, answers with that HTTP status and
	// ErrorBody (a default error body in the request's format when empty),
	// with a retry-after header when RetryAfter is set.
	Status     int    `json:"status,omitempty"`
	ErrorBody  string `json:"error_body,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`

	// CutAfterBytes > 0 closes the connection after that many bytes of the
	// stream body.
	CutAfterBytes int `json:"cut_after_bytes,omitempty"`
	// StreamError, when set, ends the stream after the content with an
	// in-stream error carrying this message: an Anthropic "error" event of
	// type overloaded_error, or an OpenAI chunk with an error object.
	StreamError string `json:"stream_error,omitempty"`
	// Delay is slept before each chunk, so UIs show streaming and tests can
	// interrupt.
	Delay time.Duration `json:"delay,omitempty"`
	// StopReason is an llm.StopReason value ("end_turn", "tool_use",
	// "max_tokens"), translated per format; by default tool_use when there
	// are tool calls, else end_turn.
	StopReason string `json:"stop_reason,omitempty"`
	// JSON answers with one application/json response instead of a stream,
	// as some servers do.
	JSON bool `json:"json,omitempty"`

	// Set by the server in preserved-thinking mode: the reply's thinking
	// block (present even with empty text), its signature, and the blocks
	// of the request that were dropped.
	thinking bool
	sig      string
	dropped  []string
}

// Format names a wire format.
type Format string

// Wire formats the server speaks.
const (
	FormatAnthropic Format = "anthropic"
	FormatOpenAI    Format = "openai"
)

// Request is one request the server received: raw, and decoded into a
// neutral view.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Format Format

	Model     string
	MaxTokens int
	Stream    bool
	System    string
	Tools     []string
	// Messages are the stored messages, without the reminder.
	Messages []llm.Message
	// Reminder is the late-injected text found after the last cache
	// breakpoint (Anthropic) or as a trailing extra user message (OpenAI).
	Reminder string
	// DecodeErr is set when the body could not be decoded.
	DecodeErr error

	// Tokens is the prompt size the server counted: CountTokens, or
	// ContextLimit's counter.
	Tokens int
	// Usage is the usage the server reported for it (scripted, or its
	// own count split by its prefix cache); zero until answered.
	Usage llm.Usage
	// PrefixFailures are the thinking blocks that failed the prefix check
	// (PreservedThinking), as "messages.I.content.J".
	PrefixFailures []string
	// Images are the images the request carried, as the server decoded
	// them (a request with an image the real server refuses is answered
	// 400, as it would be).
	Images []ImageSeen
	// Rejected is the error body the server answered with because the
	// request broke a rule, a mode's requirement or the window ("" when
	// it was served, or failed only as scripted). Set once answered.
	Rejected string
}

// DefaultText is the text of the reply served when nothing is queued and no
// handler is set.
const DefaultText = "(no scripted reply)"

// Server is the fake provider.
type Server struct {
	// URL is the base URL; URL and URL+"/v1" both work as an adapter's
	// BaseURL.
	URL string

	hs      *httptest.Server
	mu      sync.Mutex
	queue   []Reply
	handler func(Request) Reply
	observe func(Request)
	reqs    []Request
	closed  chan struct{}

	preserved bool // PreservedThinking
	limit     int  // ContextLimit
	count     func([]byte) int
	// modes and what they issued: thought signatures and
	// reasoning_details by tool call id, and whether a cache marker came.
	modes      map[Mode]bool
	signatures map[string]string
	details    map[string]json.RawMessage
	sawMarker  bool
	served     int
	local      Local
	bodies     [][]byte         // the latest requests, for the cache (usage.go)
	used       []time.Time      // when each of bodies was last read or written (CacheTTL)
	ttl        time.Duration    // CacheTTL; 0: entries never expire
	clock      func() time.Time // CacheTTL's clock
}

// NewServer starts a fake server on loopback, closed when t ends.
func NewServer(t testing.TB) *Server {
	s := newServer()
	s.hs.Start()
	s.URL = s.hs.URL
	t.Cleanup(s.Close)
	return s
}

// Listen starts a fake server on addr ("127.0.0.1:0" for any port) outside
// a test, for cmd/fakellm. Call Close when done.
func Listen(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer()
	s.hs.Listener.Close()
	s.hs.Listener = l
	s.hs.Start()
	s.URL = s.hs.URL
	return s, nil
}

func newServer() *Server {
	s := &Server{closed: make(chan struct{})}
	s.hs = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Close stops the server, ending any stream in progress.
func (s *Server) Close() {
	select {
	case <-s.closed:
		return
	default:
		close(s.closed)
	}
	s.hs.CloseClientConnections()
	s.hs.Close()
}

// Enqueue adds replies served in order, one per request.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle sets the function that answers when the queue is empty.
func (s *Server) Handle(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Observe sets a function called with each request as it arrives (after it
// is recorded), e.g. to log requests from cmd/fakellm.
func (s *Server) Observe(f func(Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = f
}

// Pending returns how many queued replies have not been served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// chatPaths are the chat endpoints and the wire format each speaks; /v1 is
// optional.
var chatPaths = map[string]Format{
	"/messages":         FormatAnthropic,
	"/chat/completions": FormatOpenAI,
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/responses") {
		s.serveResponses(w, r) // responses.go
		return
	}
	f, ok := chatPaths[strings.TrimPrefix(r.URL.Path, "/v1")]
	if !ok {
		if s.serveLocal(w, r) {
			return
		}
		http.Error(w, `{"error":{"type":"not_found_error","message":"llmtest: no such endpoint `+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	ex := s.judge(f, body, r)
	s.mu.Lock()
	reply, ok := s.settleLocked(w, ex)
	s.mu.Unlock()
	if ok {
		s.writeReply(w, r, ex, reply)
	}
}

// exchange is one chat request as the server judged it: what it decoded,
// whether the request fits the window and keeps the API's rules, and the
// stream modes its reply is written with.
type exchange struct {
	f         Format
	body      []byte
	req       Request
	imgStatus int    // not 0: the images are refused with this status
	imgErr    string // and this body
	preserved bool   // PreservedThinking, when the request came
	limit     int    // the context window, 0 for none
	count     func([]byte) int
	on        bool // Anthropic thinking is on for this request
	fits      bool // within the window
	ruleErr   string
	tc        thinkingCheck
	sm        streamModes
	x         openaiExtras
}

// judge decodes a chat request and checks it against the window and, for
// Anthropic, the API's rules and the thinking blocks sent back.
func (s *Server) judge(f Format, body []byte, r *http.Request) *exchange {
	ex := &exchange{f: f, body: body}
	req := decodeRequest(f, body)
	req.Method, req.Path, req.Header = r.Method, r.URL.Path, r.Header.Clone()
	req.Images, ex.imgStatus, ex.imgErr = checkImages(f, body)

	s.mu.Lock()
	ex.preserved, ex.limit, ex.count = s.preserved, s.limit, s.count
	s.mu.Unlock()
	if ex.count == nil {
		ex.count = CountTokens
	}
	req.Tokens = ex.count(body)
	if ex.limit <= 0 {
		// The model's own window, when the catalogue knows it.
		if m, ok := llm.LookupModel(req.Model); ok {
			ex.limit = m.ContextWindow
		}
	}
	anthropic := f == FormatAnthropic && req.DecodeErr == nil
	var wa wireAnthropic
	if anthropic {
		_ = json.Unmarshal(body, &wa)
		ex.on = thinkingOn(&wa, ex.preserved)
	}
	ex.fits = ex.limit <= 0 || s.need(f, &req, ex.on) <= ex.limit
	if anthropic && ex.fits {
		if ex.ruleErr = anthropicRules(&wa, r.Header, ex.preserved); ex.ruleErr == "" {
			ex.tc = checkThinking(body, r.Header, ex.preserved)
			req.PrefixFailures = ex.tc.failures
		}
	}
	ex.req = req
	return ex
}

// need is what a request counts against the window: its prompt, and the
// reply's reserve where the provider counts that in too.
func (s *Server) need(f Format, req *Request, thinking bool) int {
	need := req.Tokens
	if f == FormatOpenAI && (s.hasMode(DeepSeekThinking) || s.hasMode(OpenRouterReasoning) || s.hasMode(OpenRouterCache)) {
		// DeepSeek and OpenRouter count the reply's reserve in (see
		// overflowBody).
		need += req.MaxTokens
	}
	if thinking {
		// With thinking on, Anthropic counts max_tokens (the thinking
		// budget included) against the window too (see
		// anthropicInputMaxTokens).
		need += req.MaxTokens
	}
	return need
}

// settleLocked records the request and picks its reply, with s.mu held
// (it lets go while the observer and the handler run). A refused request
// (its images, a scripted rejection, the window, the API's rules) is
// answered here and false returned.
func (s *Server) settleLocked(w http.ResponseWriter, ex *exchange) (Reply, bool) {
	s.reqs = append(s.reqs, ex.req)
	idx := len(s.reqs) - 1
	reject := func(status int, body string) (Reply, bool) {
		s.reqs[idx].Rejected = body
		httpError(w, status, body)
		return Reply{}, false
	}
	if obs := s.observe; obs != nil {
		s.mu.Unlock()
		obs(ex.req)
		s.mu.Lock()
	}
	if ex.imgStatus != 0 {
		return reject(ex.imgStatus, ex.imgErr)
	}
	if st, eb := s.reject(ex.f, ex.body); st != 0 {
		return reject(st, eb)
	}
	reply := s.nextReplyLocked(ex.req)
	s.fillUsageLocked(&reply, ex)
	s.remember(ex.body)
	s.reqs[idx].Usage = reply.Usage
	ex.sm = s.streamModes(ex.f, ex.body, reply.Usage.Input+reply.Usage.CacheRead+reply.Usage.CacheWrite)
	ex.x = s.issue(&reply, ex.sm)
	if refused := s.refusal(ex); refused != "" {
		return reject(http.StatusBadRequest, refused)
	}
	return reply, true
}

// nextReplyLocked is the scripted reply: the queue's next, else the
// handler's (called without the lock), else the default text.
func (s *Server) nextReplyLocked(req Request) Reply {
	switch {
	case len(s.queue) > 0:
		reply := s.queue[0]
		s.queue = s.queue[1:]
		return reply
	case s.handler != nil:
		h := s.handler
		s.mu.Unlock()
		reply := h(req)
		s.mu.Lock()
		return reply
	}
	return Reply{Text: DefaultText}
}

// fillUsageLocked sets the usage a reply reports when the script left it
// out, as the server would count it.
func (s *Server) fillUsageLocked(reply *Reply, ex *exchange) {
	if l := s.local; l.Truncate && l.Context > 0 && ex.f == FormatOpenAI && CountTokens(ex.body) > l.Context {
		// Ollama keeps the tail that fits and counts only that.
		reply.Usage = llm.Usage{Input: l.Context - 200, Output: 200}
	}
	if reply.Usage == (llm.Usage{}) && ex.fits {
		// Unscripted usage is what the server counted, split as its
		// prefix cache would.
		reply.Usage = s.promptUsage(ex.f, ex.body, ex.count)
		reply.Usage.Output = 1 + (len(reply.Text)+len(reply.Thinking))/4
	}
}

// refusal is the 400 body the provider would send instead of a reply, or
// "" when the request is accepted.
func (s *Server) refusal(ex *exchange) string {
	switch {
	case !ex.fits:
		return s.overflowBody(ex.f, ex.req.Tokens, ex.limit, ex.req.MaxTokens, ex.on)
	case ex.ruleErr != "":
		return errorJSON(ex.ruleErr)
	}
	return ex.tc.errBody
}

// writeReply writes the reply as a scripted error, one JSON body, or a
// stream.
func (s *Server) writeReply(w http.ResponseWriter, r *http.Request, ex *exchange, reply Reply) {
	if ex.f == FormatAnthropic {
		// With thinking on, every reply starts with a thinking block
		// (empty text when none is scripted, as with display
		// "omitted"), signed for this model and, when preserved, bound
		// to this request.
		reply.thinking, reply.dropped = ex.on, ex.tc.dropped
		reply.sig = signReply(ex.body, reply.Thinking, ex.preserved)
	}
	if reply.RetryAfter != "" {
		w.Header().Set("retry-after", reply.RetryAfter)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		eb := reply.ErrorBody
		if eb == "" {
			eb = defaultErrorBody(ex.f, reply.Status)
		}
		httpError(w, reply.Status, eb)
		return
	}
	if reply.JSON {
		w.Header().Set("Content-Type", "application/json")
		if ex.f == FormatAnthropic {
			w.Write(anthropicJSON(reply))
			return
		}
		b := openaiJSON(reply, ex.sm, ex.x)
		if s.contentParts() {
			b = contentPartsJSON(b) // parts.go
		}
		w.Write(b)
		return
	}
	var chunks []string
	if ex.f == FormatAnthropic {
		chunks = anthropicStream(reply)
	} else {
		chunks = openaiStream(reply, ex.sm, ex.x)
		if s.contentParts() {
			chunks = toContentParts(chunks) // parts.go
		}
	}
	s.stream(r.Context(), w, chunks, reply)
}

// stream writes chunks as SSE, sleeping Delay before each and cutting the
// connection after CutAfterBytes.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, chunks []string, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	written := 0
	for _, c := range chunks {
		if reply.Delay > 0 {
			t := time.NewTimer(reply.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.closed:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if reply.CutAfterBytes > 0 && written+len(c) >= reply.CutAfterBytes {
			io.WriteString(w, c[:reply.CutAfterBytes-written])
			if fl != nil {
				fl.Flush()
			}
			// Abort the response: the connection closes without the
			// final chunk, as a dropped connection would.
			panic(http.ErrAbortHandler)
		}
		if _, err := io.WriteString(w, c); err != nil {
			return
		}
		written += len(c)
		if fl != nil {
			fl.Flush()
		}
	}
}

// ContextLimit makes the server refuse a request whose prompt, counted by
// count (CountTokens when nil), is over limit tokens, with the error each
// real API sends: Anthropic's "prompt is too long: N tokens > M maximum",
// OpenAI's context_length_exceeded, or the emulated server's own (see
// overflowBody). Without it the limit is the model's catalogue window.
// Replies scripted without usage report the counted prompt, as a real
// server would (see promptUsage).
func (s *Server) ContextLimit(limit int, count func(body []byte) int) {
	if count == nil {
		count = CountTokens
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.count = limit, count
}

// CountTokens is the server's default tokenizer: a token per 3 bytes of
// body, denser than harness's 4-chars estimate, as code and JSON are.
func CountTokens(body []byte) int { return len(body) / 3 }

// issue records the thought signatures and reasoning_details the modes
// give reply, so later requests can be checked against them. Called with
// s.mu held.
func (s *Server) issue(r *Reply, m streamModes) openaiExtras {
	s.served++
	x := openaiExtras{sigs: map[int]string{}}
	if m.geminiSig || m.openrouterDetails {
		// Calls are checked by id later, so ids must not repeat.
		r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
		for i := range r.ToolCalls {
			if r.ToolCalls[i].ID == "" {
				r.ToolCalls[i].ID = fmt.Sprintf("call_fake%02d_%d", s.served, i)
			}
		}
	}
	if s.signatures == nil {
		s.signatures, s.details = map[string]string{}, map[string]json.RawMessage{}
	}
	if m.geminiSig && len(r.ToolCalls) > 0 {
		// Gemini signs the first call of a parallel set only.
		id := callID(FormatOpenAI, 0, r.ToolCalls[0])
		x.sigs[0] = fakeSignature(id)
		s.signatures[id] = x.sigs[0]
	}
	if m.openrouterDetails && (r.Thinking != "" || len(r.ToolCalls) > 0) {
		text := r.Thinking
		if text == "" {
			text = "Planning the call."
		}
		ps := pieces(text)
		for i, p := range ps {
			d := obj{"type": "reasoning.text", "text": p, "format": "google-gemini-v1", "index": 0}
			if i == len(ps)-1 {
				d["signature"] = fmt.Sprintf("gAAAA-served-%d", s.served)
			}
			x.details = append(x.details, d)
		}
		whole := []any{obj{"type": "reasoning.text", "text": text, "format": "google-gemini-v1", "index": 0,
			"signature": fmt.Sprintf("gAAAA-served-%d", s.served)}}
		for i, c := range r.ToolCalls {
			s.details[callID(FormatOpenAI, i, c)] = json.RawMessage(jsonString(whole))
		}
	}
	return x
}

func defaultErrorBody(f Format, status int) string {
	typ, msg := "api_error", "llmtest: scripted failure"
	switch {
	case status == 401:
		typ, msg = "authentication_error", "invalid x-api-key"
	case status == 429:
		typ, msg = "rate_limit_error", "rate limited"
	case status == 529:
		typ, msg = "overloaded_error", "Overloaded"
	case status >= 400 && status < 500:
		typ, msg = "invalid_request_error", "bad request"
	}
	if f == FormatAnthropic {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
		return string(b)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil}})
	return string(b)
}
