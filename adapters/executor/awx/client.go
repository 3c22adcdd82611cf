package awx

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/executorobject"
)

// client talks to the REST API of one AWX executor object with its token.
type client struct {
	e     Executor
	o     executorobject.AWX
	root  string // the API root, ending in /v2
	token string
}

// apiRoot is the API root of an AWX URL: <url>/api/v2, or the URL itself
// when its path already ends in /v2 (Ansible Automation Platform 2.5 serves
// the controller behind its gateway at https://aap.example.com/api/controller/v2).
func apiRoot(raw string) (string, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("awx.url %q is not an http(s) URL such as https://awx.example.com", raw)
	}
	if strings.HasSuffix(u.Path, "/v2") {
		return u.String(), nil
	}
	return u.String() + "/api/v2", nil
}

// APIError is an answer of AWX with a status that is not a success.
type APIError struct {
	Method, Path string
	Status       int
	Excerpt      string // the start of the body: AWX's {"detail": ...} or field errors
	retryAfter   time.Duration
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("AWX answered %s %s with %d", e.Method, e.Path, e.Status)
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		msg += " (check the token that credentialRef names and its user's permissions)"
	}
	if e.Excerpt != "" {
		msg += ": " + e.Excerpt
	}
	return msg
}

// retryable: 5xx and 429 may pass on a later attempt; other 4xx will not.
func (e *APIError) retryable() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// transportError is a request that got no answer (a refused connection, a
// timeout): retryable.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var se *APIError
	var te *transportError
	return (errors.As(err, &se) && se.retryable()) || errors.As(err, &te)
}

// excerptChars bounds the part of an error body kept in a target's reason.
const excerptChars = 300

// do makes one request of path (below the API root, with a trailing slash
// as AWX wants) and decodes a successful JSON answer into out (nil: ignore
// it). Each request is bounded by the object's timeout.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := c.root + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(c.o.Timeout, executorobject.DefaultTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.e.httpClient().Do(req)
	if err != nil {
		return &transportError{err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &transportError{err: fmt.Errorf("read the answer to %s %s: %w", method, path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Excerpt: excerpt(string(b), excerptChars),
			retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// Backoff of retries: 1s, 2s, 4s, ... at most 15s apart, or what a
// Retry-After header asks (seconds).
const (
	firstBackoff = time.Second
	maxBackoff   = 15 * time.Second
)

// retry runs op until it succeeds, fails for good (a 4xx other than 429,
// a misconfiguration), or the next wait would end after retryFor counted
// from the first attempt, or after the context's deadline. Example: with
// retryFor 2m and AWX answering 503 throughout, op runs at 0s, 1s, 3s, 7s,
// 15s, 30s, 45s, ... 105s, 120s and the last 503 is the error.
func (c *client) retry(ctx context.Context, what string, op func() error) error {
	retryFor := cmp.Or(c.o.RetryFor, executorobject.DefaultRetryFor)
	giveUp := c.e.now().Add(retryFor)
	delay := firstBackoff
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !retryable(err) {
			return err
		}
		wait := delay
		var se *APIError
		if errors.As(err, &se) && se.retryAfter > 0 {
			wait = se.retryAfter
		}
		if c.e.now().Add(wait).After(giveUp) || pastDeadline(ctx, wait) {
			return fmt.Errorf("%s: gave up after %d attempts within retryFor %s: %w", what, attempt, retryFor, err)
		}
		c.e.logger().Debug("AWX request failed, retrying", "what", what, "attempt", attempt, "wait", wait, "error", err)
		if serr := c.e.sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%s: %w (while waiting to retry after: %v)", what, serr, err)
		}
		delay = min(delay*2, maxBackoff)
	}
}

// pastDeadline: a wait that ends after the context's deadline would only
// let the caller (a Lambda) time out without an answer.
func pastDeadline(ctx context.Context, wait time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < wait
}

func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

func excerpt(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}
