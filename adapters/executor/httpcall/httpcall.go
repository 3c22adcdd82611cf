// Package httpcall is how an executor calls the system that updates
// collectors over HTTP (a webhook receiver, AWX): one request, tried again
// on the answers that say "later" (5xx, 429, 408) and on timeouts and
// connection errors, with exponential backoff, within a bound of time.
// Every other answer ends the call: a 2xx accepts it, any other status
// fails it with the status and a short, sanitized excerpt of the body.
//
// Retrying is safe because every call carries an id the receiver
// de-duplicates by (X-Myriarch-Delivery, an AWX job's extra vars), so the
// call is at-least-once, like the engine task that makes it.
package httpcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Backoff between tries: FirstBackoff, doubling, at most MaxBackoff.
// Example: 1s, 2s, 4s, 8s, 16s, 30s, 30s ... A Retry-After longer than the
// backoff is waited for instead.
const (
	FirstBackoff = time.Second
	MaxBackoff   = 30 * time.Second
)

// MaxExcerptBytes bounds the part of an answer's body an error quotes.
const MaxExcerptBytes = 200

// maxBodyBytes bounds what is read of an answer.
const maxBodyBytes = 64 << 10

// saveMargin is the time a call leaves of its context's deadline: the
// engine must still store the outcome after the last try.
const saveMargin = 5 * time.Second

// Caller sends requests. Now and Sleep are the clock (required: nothing in
// core/ or adapters/ reads the wall clock itself); HTTP nil is a client of its own.
// Redirects are not followed: a POST that became a GET elsewhere would be
// accepted by nobody.
type Caller struct {
	HTTP  *http.Client
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, when set, hears every try that is repeated: the error and
	// the wait before the next one.
	OnRetry func(err error, wait time.Duration)
}

// Request is one call.
type Request struct {
	Timeout  time.Duration // per try
	RetryFor time.Duration // tries start within it
	// New builds the request of one try (a signed request carries the time
	// of its try); ctx is the try's.
	New func(ctx context.Context) (*http.Request, error)
}

// Response is the 2xx answer of a call.
type Response struct {
	Status int
	Header http.Header
	Body   []byte // at most 64 KiB
	Tries  int
}

// StatusError is an answer that failed the call.
type StatusError struct {
	URL     string // without its query
	Status  int
	Text    string // "400 Bad Request"
	Excerpt string // of the body, sanitized, at most MaxExcerptBytes
	Hint    string // what to do, when there is something to say
}

func (e *StatusError) Error() string {
	msg := e.URL + " answered " + e.Text
	if e.Excerpt != "" {
		msg += ": " + e.Excerpt
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// GaveUpError is the last error of a call whose tries ran out of time.
type GaveUpError struct {
	Tries   int
	Elapsed time.Duration
	Why     string // "retryFor 2m0s is over", "the task's time runs out", ...
	Last    error
}

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("gave up after %d tries in %s (%s): %v", e.Tries, e.Elapsed.Round(time.Millisecond), e.Why, e.Last)
}

func (e *GaveUpError) Unwrap() error { return e.Last }

// Do sends the request until a try is accepted (2xx), one fails it (a
// status that is not retried), or no further try fits: within RetryFor of
// the first, and before the context's deadline less a margin to store the
// outcome. The error of a call that ran out of tries is a *GaveUpError
// around the last try's.
func (c Caller) Do(ctx context.Context, r Request) (Response, error) {
	hc := c.client()
	start := c.Now()
	for try := 1; ; try++ {
		res, err := c.try(ctx, hc, r)
		res.Tries = try
		var retry *retryable
		if !errors.As(err, &retry) {
			return res, err
		}
		wait := max(backoff(try), retry.after)
		if why := c.noTimeFor(ctx, start, wait, r); why != "" {
			return res, &GaveUpError{Tries: try, Elapsed: c.Now().Sub(start), Why: why, Last: retry.err}
		}
		if c.OnRetry != nil {
			c.OnRetry(retry.err, wait)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return res, &GaveUpError{Tries: try, Elapsed: c.Now().Sub(start), Why: "the call was cancelled", Last: retry.err}
		}
	}
}

// backoff before the next try after try n: 1s, 2s, 4s ... at most 30s.
func backoff(n int) time.Duration {
	return min(FirstBackoff<<min(n-1, 10), MaxBackoff)
}

// noTimeFor says why no try may follow a wait, or "".
// Example: retryFor 2m, first try at 12:00:00, now 12:01:50: a wait of 16s
// would start the next try at 12:02:06, after 12:02:00: no.
func (c Caller) noTimeFor(ctx context.Context, start time.Time, wait time.Duration, r Request) string {
	now := c.Now()
	next := now.Add(wait)
	if next.After(start.Add(r.RetryFor)) {
		return fmt.Sprintf("retryFor %s is over before the next try in %s", r.RetryFor, wait.Round(time.Millisecond))
	}
	if dl, ok := ctx.Deadline(); ok && next.Add(r.Timeout+saveMargin).After(dl) {
		return "the engine task's time runs out"
	}
	if ctx.Err() != nil {
		return "the call was cancelled"
	}
	return ""
}

// retryable wraps the error of a try that may be repeated, with the wait
// its answer asks for (Retry-After).
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }

func (c Caller) try(ctx context.Context, hc *http.Client, r Request) (Response, error) {
	tctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	req, err := r.New(tctx)
	if err != nil {
		return Response{}, err
	}
	where := redact(req.URL)
	res, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("%s %s: %w", req.Method, where, ctx.Err())
		}
		if tctx.Err() != nil {
			err = fmt.Errorf("no answer within timeout %s", r.Timeout)
		}
		return Response{}, &retryable{err: fmt.Errorf("%s %s: %w", req.Method, where, unwrapURLError(err))}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBodyBytes))
	out := Response{Status: res.StatusCode, Header: res.Header, Body: body}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return out, nil
	}
	se := &StatusError{URL: where, Status: res.StatusCode, Text: statusText(res), Excerpt: Excerpt(body)}
	switch code := res.StatusCode; {
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return out, &retryable{err: se, after: retryAfter(res.Header.Get("Retry-After"), c.Now())}
	case code >= 300 && code < 400:
		se.Hint = "redirects are not followed; set the URL to where it points"
		if loc := res.Header.Get("Location"); loc != "" {
			se.Hint += ": " + Excerpt([]byte(loc))
		}
	}
	return out, se
}

func (c Caller) client() *http.Client {
	hc := http.Client{}
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

func (c Caller) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return Wait(ctx, d)
}

// Wait waits d or until ctx is done, on a timer: the Sleep of a deployment.
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter reads Retry-After: seconds, or an HTTP date; 0 when absent or
// unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v = strings.TrimSpace(v); v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func statusText(res *http.Response) string {
	if t := http.StatusText(res.StatusCode); t != "" {
		return strconv.Itoa(res.StatusCode) + " " + t
	}
	return strconv.Itoa(res.StatusCode)
}

// redact is the URL as errors show it: without user information, query
// and fragment, which may carry tokens.
func redact(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment, c.RawFragment = nil, "", "", ""
	return c.String()
}

// unwrapURLError drops the *url.Error around a transport error: it repeats
// the method and the URL, query included.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Excerpt is the start of a body as an error may quote it: valid UTF-8,
// control characters and runs of white space as one space, at most
// MaxExcerptBytes bytes with "..." where it was cut.
func Excerpt(body []byte) string {
	const dots = "..."
	cut := len(body) > 4*MaxExcerptBytes // more than an excerpt can show
	text := strings.ToValidUTF8(string(body[:min(len(body), 4*MaxExcerptBytes)]), "\uFFFD")
	text = strings.Join(strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r)
	}), " ")
	if len(text) <= MaxExcerptBytes && !cut {
		return text
	}
	n := min(len(text), MaxExcerptBytes-len(dots))
	for n > 0 && n < len(text) && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + dots
}
