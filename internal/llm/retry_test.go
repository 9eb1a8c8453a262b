package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// scripted is a Provider that fails with errs in order, then succeeds.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	s.calls++
	if onEvent != nil {
		onEvent(llm.Event{Type: llm.EventText, Text: "attempt"})
	}
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return nil, err
	}
	return &llm.Reply{Message: llm.Text(llm.RoleAssistant, "done"), StopReason: llm.StopEnd}, nil
}

type sleeps struct{ waits []time.Duration }

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func TestWithRetry(t *testing.T) {
	over := &llm.Error{Kind: llm.ErrOverloaded, Status: 529}
	cut := &llm.Error{Kind: llm.ErrStreamCut}
	tests := []struct {
		name      string
		errs      []error
		opts      llm.RetryOptions
		wantErr   llm.ErrorKind // ErrUnknown: success
		wantCalls int
		wantWaits []time.Duration
	}{
		{"success at once", nil, llm.RetryOptions{}, llm.ErrUnknown, 1, nil},
		{"auth never retried", []error{&llm.Error{Kind: llm.ErrAuth, Status: 401}}, llm.RetryOptions{}, llm.ErrAuth, 1, nil},
		{"bad request never retried", []error{&llm.Error{Kind: llm.ErrBadRequest}}, llm.RetryOptions{}, llm.ErrBadRequest, 1, nil},
		{"context too long never retried", []error{&llm.Error{Kind: llm.ErrContextTooLong}}, llm.RetryOptions{}, llm.ErrContextTooLong, 1, nil},
		{"untyped error not retried", []error{errors.New("boom")}, llm.RetryOptions{}, llm.ErrUnknown - 1, 1, nil},
		// Rand is 0.5: waits are half of min(cap, base·2ⁿ).
		{"overloaded backs off exponentially", []error{over, over, over}, llm.RetryOptions{}, llm.ErrUnknown, 4,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"backoff capped and bounded", []error{over, over, over, over, over, over, over}, llm.RetryOptions{MaxRetries: 6, Cap: 3 * time.Second}, llm.ErrOverloaded, 7,
			[]time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond}},
		{"default bound is 5 retries", []error{over, over, over, over, over, over}, llm.RetryOptions{}, llm.ErrOverloaded, 6,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"retry-after honoured when longer", []error{&llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 20 * time.Second}}, llm.RetryOptions{}, llm.ErrUnknown, 2,
			[]time.Duration{20 * time.Second}},
		{"retry-after ignored when shorter", []error{&llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: time.Millisecond}}, llm.RetryOptions{}, llm.ErrUnknown, 2,
			[]time.Duration{500 * time.Millisecond}},
		{"retry-after too long gives up", []error{&llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: time.Hour}}, llm.RetryOptions{}, llm.ErrRateLimit, 1, nil},
		{"cut stream retried fresh", []error{cut}, llm.RetryOptions{}, llm.ErrUnknown, 2, []time.Duration{500 * time.Millisecond}},
		{"negative MaxRetries never retries", []error{over}, llm.RetryOptions{MaxRetries: -1}, llm.ErrOverloaded, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &scripted{errs: append([]error(nil), tt.errs...)}
			var sl sleeps
			o := tt.opts
			o.Sleep = sl.sleep
			o.Rand = func() float64 { return 0.5 }
			p := llm.WithRetry(inner, o)
			if p.Name() != "scripted" {
				t.Errorf("Name = %q", p.Name())
			}
			var retries []error
			var announced []time.Duration
			reply, err := p.Stream(context.Background(), &llm.Request{}, func(e llm.Event) {
				if e.Type == llm.EventRetry {
					retries = append(retries, e.Err)
					announced = append(announced, e.Wait)
					if e.Try != len(retries)+1 {
						t.Errorf("retry event says attempt %d, want %d", e.Try, len(retries)+1)
					}
				}
			})
			switch {
			case tt.wantErr == llm.ErrUnknown:
				if err != nil || reply.Message.PlainText() != "done" {
					t.Fatalf("reply %v, err %v; want success", reply, err)
				}
			case tt.wantErr < llm.ErrUnknown:
				if err == nil || llm.KindOf(err) != llm.ErrUnknown {
					t.Fatalf("err = %v, want the untyped error", err)
				}
			default:
				if llm.KindOf(err) != tt.wantErr || reply != nil {
					t.Fatalf("reply %v, err %v; want kind %v", reply, err, tt.wantErr)
				}
			}
			if inner.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", inner.calls, tt.wantCalls)
			}
			if len(sl.waits) != len(tt.wantWaits) {
				t.Fatalf("waits = %v, want %v", sl.waits, tt.wantWaits)
			}
			for i := range sl.waits {
				if i < len(announced) && announced[i] != sl.waits[i] {
					t.Errorf("retry event %d announced %v, waited %v", i, announced[i], sl.waits[i])
				}
				if sl.waits[i] != tt.wantWaits[i] {
					t.Errorf("wait %d = %v, want %v", i, sl.waits[i], tt.wantWaits[i])
				}
			}
			if len(retries) != len(tt.wantWaits) {
				t.Errorf("%d retry events for %d waits", len(retries), len(tt.wantWaits))
			}
			for _, e := range retries {
				if e == nil {
					t.Error("retry event without Err")
				}
			}
		})
	}
}

func TestWithRetryFullJitterRange(t *testing.T) {
	for _, r := range []float64{0, 0.999} {
		var sl sleeps
		p := llm.WithRetry(&scripted{errs: []error{&llm.Error{Kind: llm.ErrOverloaded}}},
			llm.RetryOptions{Sleep: sl.sleep, Rand: func() float64 { return r }})
		if _, err := p.Stream(context.Background(), &llm.Request{}, nil); err != nil {
			t.Fatal(err)
		}
		if w := sl.waits[0]; w < 0 || w >= time.Second {
			t.Errorf("rand %v: first wait %v, want in [0, 1s)", r, w)
		}
	}
}

func TestWithRetryStopsOnCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner := &scripted{errs: []error{&llm.Error{Kind: llm.ErrOverloaded}, &llm.Error{Kind: llm.ErrOverloaded}}}
	// The real sleep with an hour-long wait: only cancellation can end it.
	p := llm.WithRetry(inner, llm.RetryOptions{Base: time.Hour, Cap: 2 * time.Hour, Rand: func() float64 { return 0.9 }})
	_, err := p.Stream(ctx, &llm.Request{}, func(e llm.Event) {
		if e.Type == llm.EventRetry {
			go cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if inner.calls != 1 {
		t.Errorf("calls = %d, want 1 (no attempt after cancel)", inner.calls)
	}
}

func TestContextLimit(t *testing.T) {
	for _, tc := range []struct {
		msg           string
		prompt, limit int
	}{
		{"prompt is too long: 209353 tokens > 199999 maximum", 209353, 199999},
		{"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again", 178959, 136000},
		{"This model's maximum context length is 4097 tokens. However, you requested 4431 tokens (3431 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", 3431, 3097},
		{"This model's maximum context length is 32000 tokens. However, your messages resulted in 40000 tokens. Please reduce the length of the messages.", 40000, 32000},
		{"the request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it", 5000, 4096},
		{"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", 42832, 32768},
		{"This endpoint's maximum context length is 200000 tokens. However, you requested about 210000 tokens (190000 of text input, 20000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", 190000, 180000},
		{"context_length_exceeded", 0, 0},
	} {
		p, l := llm.ContextLimit(&llm.Error{Kind: llm.ErrContextTooLong, Message: tc.msg})
		if p != tc.prompt || l != tc.limit {
			t.Errorf("%q: got %d, %d; want %d, %d", tc.msg, p, l, tc.prompt, tc.limit)
		}
	}
	if p, l := llm.ContextLimit(&llm.Error{Kind: llm.ErrBadRequest, Message: "prompt is too long: 5 tokens > 4 maximum"}); p != 0 || l != 0 {
		t.Error("read sizes from an error of another kind")
	}
}

// TestRetryAfterTooLongSaysHowLong: a 429 asking for an hour is not
// waited for, and the error says how long the server asked.
func TestRetryAfterTooLongSaysHowLong(t *testing.T) {
	inner := &scripted{errs: []error{&llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: time.Hour, Message: "quota window"}}}
	var sl sleeps
	_, err := llm.WithRetry(inner, llm.RetryOptions{Sleep: sl.sleep}).Stream(context.Background(), &llm.Request{}, nil)
	var w *llm.WaitTooLongError
	if !errors.As(err, &w) || w.Wait != time.Hour || !strings.Contains(err.Error(), "asked to wait 1h0m0s") || !strings.Contains(err.Error(), "quota window") {
		t.Fatalf("err = %v, want one saying the server asked for an hour", err)
	}
	if llm.KindOf(err) != llm.ErrRateLimit || len(sl.waits) != 0 {
		t.Errorf("kind %v, waits %v", llm.KindOf(err), sl.waits)
	}
}
