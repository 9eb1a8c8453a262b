package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatusError classifies a non-2xx HTTP answer from a provider. message is
// the provider's own explanation (already extracted from its JSON error
// body); errType is its machine-readable error type or code when it has one
// ("overloaded_error", "context_length_exceeded", …). The adapters share it
// so both wire formats map the same failures to the same kinds.
func StatusError(status int, h http.Header, errType, message string, now time.Time) *Error {
	e := &Error{Status: status, Message: message}
	switch {
	case errType == "overloaded_error":
		e.Kind = ErrOverloaded
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusTooManyRequests && errType == "insufficient_quota":
		// OpenAI reports an exhausted balance as a 429; waiting does not help.
		e.Kind = ErrBadRequest
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimit
	case IsContextTooLong(errType, message):
		e.Kind = ErrContextTooLong
	case status == 529 || (status >= 500 && status <= 504) || cloudflareRetryable(status):
		e.Kind = ErrOverloaded
	case status == http.StatusRequestEntityTooLarge:
		e.Kind = ErrContextTooLong
	case status == http.StatusNotFound && modelNotFound(errType, message):
		e.Kind = ErrModelNotFound
	case status >= 400 && status < 500:
		e.Kind = ErrBadRequest
	default:
		e.Kind = ErrUnknown
	}
	if e.Kind == ErrRateLimit || e.Kind == ErrOverloaded {
		e.RetryAfter = RetryAfter(h, now)
	}
	return e
}

// modelNotFound reports whether a 404's type or words are about the model
// (a wrong BASE_URL path is a 404 too, with neither):
//
//	Anthropic  type not_found_error, "model: claude-x"
//	OpenAI     code model_not_found, "The model `x` does not exist or you do not have access to it."
//	Ollama     "model \"x\" not found, try pulling it first"
func modelNotFound(errType, message string) bool {
	if strings.Contains(errType, "model_not_found") {
		return true
	}
	return strings.Contains(strings.ToLower(message), "model")
}

// cloudflareRetryable reports the Cloudflare statuses that mean the origin
// was slow or gone for a moment (520 unknown error, 521 down, 522 connection
// timed out, 523 unreachable, 524 a timeout occurred): proxies in front of
// model servers return them under load, and a fresh request usually works.
func cloudflareRetryable(status int) bool { return status >= 520 && status <= 524 }

// contextTooLongPhrases are the ways servers say the prompt does not fit,
// lower-cased, each from a server's documented or reported message:
//
//	Anthropic   "prompt is too long: 202128 tokens > 200000 maximum"
//	Anthropic   "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, …"
//	OpenAI      code context_length_exceeded; "This model's maximum context length is …"
//	OpenAI      code model_context_window_exceeded (Responses-style gateways)
//	llama.cpp   "the request exceeds the available context size" / exceed_context_size_error
//	vLLM        "This model's maximum context length is 4096 tokens. However, you requested …"
//	Gemini      "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
//	xAI         "This model's maximum prompt length is 131072 but the request contains 136973 tokens."
//	Groq        code context_length_exceeded, "Please reduce the length of the messages or completion."
//	OpenRouter  "This endpoint's maximum context length is …"
var contextTooLongPhrases = []string{
	"prompt is too long",
	"context_length_exceeded",
	"context_window_exceeded",
	"exceeds the available context size",
	"exceed_context_size",
	"maximum context length",
	"context length exceeded",
	"context window",
	"input is too long",
	"exceed context limit",
	"maximum prompt length",
	"exceeds the maximum number of tokens allowed",
	"reduce the length of the messages",
}

// IsContextTooLong reports whether a provider's error type or message says
// the prompt is over the model's window.
func IsContextTooLong(errType, message string) bool {
	s := strings.ToLower(errType + " " + message)
	for _, p := range contextTooLongPhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// RetryAfter reads how long the server asked us to wait: retry-after-ms
// (milliseconds, OpenAI), or retry-after as seconds or an HTTP date. It
// returns 0 when there is no usable hint.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Redact removes secret from s, so an API key echoed by a server or a
// transport error never reaches a log or the screen.
func Redact(s, secret string) string {
	if secret == "" || len(secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// PlainBody is an error body that is not the provider's JSON, made fit to
// show: an HTML page (a proxy's or Cloudflare's) is reduced to its title,
// anything else is trimmed.
func PlainBody(data []byte) string {
	s := strings.TrimSpace(string(data))
	low := strings.ToLower(s)
	if !strings.HasPrefix(low, "<!doctype html") && !strings.HasPrefix(low, "<html") {
		return s
	}
	i := strings.Index(low, "<title>")
	j := strings.Index(low, "</title>")
	if i < 0 || j < i {
		return s
	}
	t := strings.Join(strings.Fields(s[i+len("<title>"):j]), " ")
	return "an HTML error page: " + t
}
