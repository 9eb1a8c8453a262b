package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryOptions bound how WithRetry retries. Zero values take the defaults.
type RetryOptions struct {
	// MaxRetries is how many times a failed request is tried again
	// (default 5; negative means never).
	MaxRetries int
	// Base and Cap shape the exponential backoff: the n-th wait is drawn
	// uniformly from [0, min(Cap, Base·2ⁿ)) ("full jitter"). Defaults 1 s
	// and 30 s.
	Base, Cap time.Duration
	// MaxRetryAfter is the longest server-requested wait honoured; a longer
	// retry-after returns the error instead of stalling the session
	// (default 2 minutes).
	MaxRetryAfter time.Duration

	// Sleep waits d or until ctx is done; Rand returns a float in [0, 1).
	// Tests replace them; nil means real time and math/rand.
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  func() float64
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.MaxRetries == 0 {
		o.MaxRetries = 5
	}
	if o.Base <= 0 {
		o.Base = time.Second
	}
	if o.Cap <= 0 {
		o.Cap = 30 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 2 * time.Minute
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// WithRetry returns a Provider that retries p's retryable failures (rate
// limits, overload, cut streams) as fresh requests, waiting with jittered
// exponential backoff or the server's retry-after when that is longer. An
// EventRetry carrying the error is sent before each wait, so a UI can drop
// what it showed of the failed attempt: the returned Reply only ever holds
// the attempt that completed.
func WithRetry(p Provider, o RetryOptions) Provider {
	return &retrying{p: p, o: o.withDefaults()}
}

type retrying struct {
	p Provider
	o RetryOptions
}

func (r *retrying) Name() string { return r.p.Name() }

func (r *retrying) Stream(ctx context.Context, req *Request, onEvent func(Event)) (*Reply, error) {
	for attempt := 0; ; attempt++ {
		reply, err := r.p.Stream(ctx, req, onEvent)
		if err == nil {
			return reply, nil
		}
		var e *Error
		if errors.As(err, &e) && e.Kind == ErrModelNotFound && e.Model == "" {
			e.Model = req.Model // its advice names it
		}
		if !errors.As(err, &e) || !e.Retryable() || attempt >= r.o.MaxRetries || ctx.Err() != nil {
			return nil, err
		}
		if e.RetryAfter > r.o.MaxRetryAfter {
			// Say how long the server asked for: a quota window of an
			// hour is worth knowing before trying again.
			return nil, &WaitTooLongError{Err: err, Wait: e.RetryAfter, Max: r.o.MaxRetryAfter, Until: time.Now().Add(e.RetryAfter)}
		}
		wait := r.backoff(attempt)
		if e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		if onEvent != nil {
			onEvent(Event{Type: EventRetry, Err: err, Wait: wait, Try: attempt + 2})
		}
		if serr := r.o.Sleep(ctx, wait); serr != nil {
			return nil, serr
		}
	}
}

// backoff is the full-jitter wait before retry number attempt (from 0).
func (r *retrying) backoff(attempt int) time.Duration {
	ceil := r.o.Cap
	if attempt < 30 {
		if d := r.o.Base << attempt; d > 0 && d < ceil {
			ceil = d
		}
	}
	return time.Duration(r.o.Rand() * float64(ceil))
}

// WaitTooLongError is a retryable failure whose server asked for a longer
// wait than harness spends on a retry.
type WaitTooLongError struct {
	Err       error
	Wait, Max time.Duration
	Until     time.Time // when the server's wait ends
}

func (e *WaitTooLongError) Error() string {
	return fmt.Sprintf("%v; the server asked to wait %s before trying again (harness waits at most %s): try again after %s",
		e.Err, e.Wait.Round(time.Second), e.Max, e.Until.Local().Format("15:04"))
}

func (e *WaitTooLongError) Unwrap() error { return e.Err }
