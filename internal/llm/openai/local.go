package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// ServerWindow is the context a local server really runs a model with,
// read from the server's own API.
type ServerWindow struct {
	Server  string // "Ollama" or "llama.cpp"
	Tokens  int    // the context the server gives each request
	Trained int    // the model's own maximum, when the server says (Ollama)
	Source  string // where Tokens came from, for the message
	// Default is set when Tokens is the server's documented default, not
	// a value it reported for this model.
	Default bool
}

// ollamaDefaultContext is Ollama's context when neither num_ctx nor
// OLLAMA_CONTEXT_LENGTH is set, on machines with under 24 GiB of VRAM
// (docs/context-length.mdx); its OpenAI endpoint cannot change it per
// request (num_ctx there is ignored).
const ollamaDefaultContext = 4096

// serverRoot is the base URL without its /v1 suffix, where Ollama's and
// llama.cpp's own endpoints live.
func serverRoot(baseURL string) string {
	b := strings.TrimRight(baseURL, "/")
	return strings.TrimSuffix(b, "/v1")
}

// IsLocal reports whether baseURL is on this machine, where a server's own
// API can be asked about its context.
func IsLocal(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ProbeWindow asks the server at baseURL what context it runs model with:
// Ollama's /api/ps (the loaded model's context_length) and /api/show
// (num_ctx in its parameters, the trained context_length in model_info),
// then llama.cpp's /props (n_ctx). ok is false when neither answers.
func ProbeWindow(ctx context.Context, client *http.Client, baseURL, model string) (ServerWindow, bool) {
	if client == nil {
		client = http.DefaultClient
	}
	root := serverRoot(baseURL)
	if w, ok := probeOllama(ctx, client, root, model); ok {
		return w, true
	}
	return probeLlamaCpp(ctx, client, root)
}

func getJSON(ctx context.Context, client *http.Client, method, url string, body any, v any) bool {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return false
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v) == nil
}

var numCtx = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`) })

func probeOllama(ctx context.Context, client *http.Client, root, model string) (ServerWindow, bool) {
	var show struct {
		Modelfile  string                     `json:"modelfile"`
		Parameters string                     `json:"parameters"`
		Template   string                     `json:"template"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
		Details    *struct {
			Format string `json:"format"`
			Family string `json:"family"`
		} `json:"details"`
	}
	if !getJSON(ctx, client, http.MethodPost, root+"/api/show", map[string]string{"model": model}, &show) {
		return ServerWindow{}, false
	}
	// Only a reply with Ollama's own fields is Ollama's: other servers on
	// this port answer any path with 200 and some JSON, and taking that
	// for Ollama "with no context set" would warn about a 4096-token
	// window that is not there.
	_, arch := show.ModelInfo["general.architecture"]
	if !arch && show.Modelfile == "" && show.Template == "" && (show.Details == nil || show.Details.Format == "") {
		return ServerWindow{}, false
	}
	w := ServerWindow{Server: "Ollama"}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			w.Trained, _ = strconv.Atoi(string(v))
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if getJSON(ctx, client, http.MethodGet, root+"/api/ps", nil, &ps) {
		for _, m := range ps.Models {
			if (m.Name == model || m.Model == model || m.Name == model+":latest") && m.ContextLength > 0 {
				w.Tokens, w.Source = m.ContextLength, "/api/ps (the loaded model)"
				return w, true
			}
		}
	}
	if m := numCtx().FindStringSubmatch(show.Parameters); m != nil {
		w.Tokens, _ = strconv.Atoi(m[1])
		w.Source = "num_ctx in the model's parameters (/api/show)"
		return w, true
	}
	w.Tokens, w.Default, w.Source = ollamaDefaultContext, true, "Ollama's default"
	if w.Trained > 0 && w.Trained < w.Tokens {
		w.Tokens = w.Trained
	}
	return w, true
}

func probeLlamaCpp(ctx context.Context, client *http.Client, root string) (ServerWindow, bool) {
	var props struct {
		Settings *struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx       int     `json:"n_ctx"`
		TotalSlots *int    `json:"total_slots"`
		ModelPath  *string `json:"model_path"`
	}
	if !getJSON(ctx, client, http.MethodGet, root+"/props", nil, &props) {
		return ServerWindow{}, false
	}
	// llama-server's /props has its generation settings, slot count and
	// model path; an n_ctx alone in some other server's JSON is not it.
	if props.Settings == nil && props.TotalSlots == nil && props.ModelPath == nil {
		return ServerWindow{}, false
	}
	n := 0
	if props.Settings != nil {
		n = props.Settings.NCtx
	}
	if n == 0 {
		n = props.NCtx
	}
	if n <= 0 {
		return ServerWindow{}, false
	}
	return ServerWindow{Server: "llama.cpp", Tokens: n, Source: "n_ctx in /props (per slot)"}, true
}

// WindowWarning is what to tell a user whose CONTEXT_WINDOW is larger than
// the server's context, or "" when it fits. The server then cuts the
// prompt from the front, system prompt and tools first, and compaction
// never fires because the window harness counts against is not the real
// one.
func WindowWarning(w ServerWindow, configured int, model, envFile string) string {
	if w.Tokens <= 0 || configured <= w.Tokens {
		return ""
	}
	how := "restart llama-server with a larger --ctx-size (-c)"
	if w.Server == "Ollama" {
		how = fmt.Sprintf("raise Ollama's context (OLLAMA_CONTEXT_LENGTH=%d ollama serve, or PARAMETER num_ctx in a Modelfile; num_ctx sent over /v1 is ignored)", min(configured, max(w.Trained, w.Tokens)))
	}
	what := fmt.Sprintf("runs %s with a %d-token context", model, w.Tokens)
	if w.Default {
		what = fmt.Sprintf("sets no context for %s, so it uses its default of %d tokens", model, w.Tokens)
	}
	return fmt.Sprintf("CONTEXT_WINDOW is %d but %s %s (%s): it will cut the prompt from the front, dropping the system prompt and tools. Set CONTEXT_WINDOW=%d in %s, or %s",
		configured, w.Server, what, w.Source, w.Tokens, envFile, how)
}

// truncationFloor is the smallest request checked for front truncation,
// in estimated tokens: below it a tokenizer's spread is larger than any
// truncation worth a word.
const truncationFloor = 2000

// checkTruncation compares the prompt size a server reports with the size
// of what was sent. A local server whose context is smaller than the
// prompt drops its front and reports the kept part as the prompt; taken as
// truth, the count would make harness believe the context has room and
// never compact. The estimate (4 bytes a token, generous for JSON) replaces
// the reported input, and the user is told once.
func (p *Provider) checkTruncation(body []byte, r *llm.Reply, onEvent func(llm.Event)) {
	est := len(body) / 4
	got := r.Usage.Prompt()
	if est < truncationFloor || got == 0 || got*2 >= est {
		return
	}
	r.Usage.Input = est - r.Usage.CacheRead - r.Usage.CacheWrite
	p.mu.Lock()
	first := !p.warnedTruncation
	p.warnedTruncation = true
	p.mu.Unlock()
	if first && onEvent != nil {
		onEvent(llm.Event{Type: llm.EventNotice, Text: fmt.Sprintf(
			"the server counted %d prompt tokens for a request of about %d: it cut the prompt from the front to fit its context, so the system prompt and tools were likely lost. harness counts the request's own size instead; raise the server's context (Ollama: OLLAMA_CONTEXT_LENGTH; llama.cpp: --ctx-size) or lower CONTEXT_WINDOW", got, est)})
	}
}
