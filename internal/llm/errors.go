package llm

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies provider failures by what the caller should do.
type ErrorKind int

// Error kinds.
const (
	ErrUnknown        ErrorKind = iota
	ErrAuth                     // bad or missing key: never retried
	ErrRateLimit                // 429: retried after RetryAfter
	ErrOverloaded               // 529 / 5xx / "overloaded": retried with backoff
	ErrContextTooLong           // prompt over the window: the context layers act
	ErrStreamCut                // connection or stream ended early: retried fresh
	ErrBadRequest               // other 4xx: a bug or a setting, not retried
	ErrModelNotFound            // 404 for the model named: a setting, not retried
)

func (k ErrorKind) String() string {
	switch k {
	case ErrAuth:
		return "authentication failed"
	case ErrRateLimit:
		return "rate limited"
	case ErrOverloaded:
		return "provider overloaded or failing"
	case ErrContextTooLong:
		return "context too long"
	case ErrStreamCut:
		return "stream cut"
	case ErrBadRequest:
		return "request rejected"
	case ErrModelNotFound:
		return "model not found"
	}
	return "provider error"
}

// Error is a classified provider failure.
type Error struct {
	Kind       ErrorKind
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from retry-after, 0 when absent
	Message    string        // the provider's own words
	Err        error         // underlying transport error, if any
	// Model is the model the request named, for ErrModelNotFound's advice
	// (set by WithRetry, which sees the request).
	Model string
}

func (e *Error) Error() string {
	s := e.Kind.String()
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	switch e.Kind {
	case ErrAuth:
		s += "; check API_KEY in ~/.agents/env or the environment"
	case ErrContextTooLong:
		s += "; run /compact or start a new session"
	case ErrModelNotFound:
		s += modelNotFoundAdvice(e.Model)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a fresh attempt of the same request may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrStreamCut:
		return true
	}
	return false
}

// KindOf returns the kind of err, or ErrUnknown when err is not an *Error.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ErrUnknown
}

// modelNotFoundAdvice says what to do when the provider does not know
// the model: list, switch, or check the name the server uses.
func modelNotFoundAdvice(model string) string {
	name := "the model"
	if model != "" {
		name = fmt.Sprintf("model %q", model)
	}
	return "; the provider does not serve " + name + ": `harness models` lists the catalogue, /model NAME switches for this session, " +
		"MODEL in ~/.agents/env sets it for the next; a name only your server knows goes in ~/.agents/models.json " +
		`({"models":[{"name":"NAME"}]})`
}
