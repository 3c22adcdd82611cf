// Package client is a thin typed client of the Myriarch REST API
// (api/openapi.yaml) over net/http. The shapes the API serves are those of
// package schema, which the server shares (the client does not import the
// server), so that encoding a decoded value gives the API's JSON back; a
// refusal is a *Problem. myrctl and the demo driver use it.
//
// A Client is safe for concurrent use.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/myriarch/myriarch/core/page"
)

// MaxResponseBytes bounds what the client reads of one answer.
const MaxResponseBytes = 64 << 20

// Client calls the API at BaseURL (for example http://127.0.0.1:8080, or an
// API Gateway stage URL) with a bearer token. A BaseURL that ends in /api/v1
// (as the local stack prints it) works too: the paths of the API start with
// /api/v1 and it is not sent twice.
type Client struct {
	BaseURL   string
	Token     string
	HTTP      *http.Client // nil: http.DefaultClient
	UserAgent string
}

// New returns a client of the API at baseURL.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: Base(baseURL), Token: token, UserAgent: "myriarch-client"}
}

// apiPrefix starts every path of the API.
const apiPrefix = "/api/v1"

// Base is the API's base URL as the client uses it: without trailing
// slashes and without a trailing /api/v1, so that
// http://127.0.0.1:8080/api/v1/ and http://127.0.0.1:8080 are the same API.
func Base(u string) string {
	u = strings.TrimRight(u, "/")
	if strings.HasSuffix(u, apiPrefix) {
		u = strings.TrimRight(strings.TrimSuffix(u, apiPrefix), "/")
	}
	return u
}

// Do sends one request: in (if not nil) as the JSON body, out (if not nil)
// filled from the JSON answer; out may be a *json.RawMessage to keep the
// API's bytes. path starts with /api/v1. A refusal is a *Problem; a request
// that got no answer (connection refused, a host name that does not
// resolve, a timeout, TLS) is an *UnreachableError; the end of ctx is
// wrapped as it came.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	req, err := c.newRequest(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		return &UnreachableError{BaseURL: redacted(Base(c.BaseURL)), Method: method, Path: path, Reason: unreachableReason(err), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newProblem(resp.StatusCode, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
	}
	return nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, in any) (*http.Request, error) {
	u := Base(c.BaseURL) + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	return req, nil
}

// get is Do for a GET.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, query, nil, out)
}

// Page is one page of a list, the API's wire shape (core/page); Next is
// empty on the last page. With a status filter a page may hold fewer items
// than asked for, even none, while Next is set.
type Page[T any] = page.Page[T]

// MaxPageSize is the largest page the API gives.
const MaxPageSize = 500

// All follows the pages that next returns, starting with the first
// (token ""), until the last or until limit items were collected (limit 0:
// every item). next is asked for at most the items still wanted.
func All[T any](ctx context.Context, limit int, next func(token string, size int) (Page[T], error)) ([]T, error) {
	out := []T{}
	token := ""
	for {
		size := MaxPageSize
		if limit > 0 {
			size = min(size, limit-len(out))
		}
		p, err := next(token, size)
		if err != nil {
			return out, err
		}
		out = append(out, p.Items...)
		if limit > 0 && len(out) >= limit {
			return out[:limit], nil
		}
		if p.Next == "" {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		token = p.Next
	}
}

// pageQuery adds limit and pageToken to q.
func pageQuery(q url.Values, limit int, token string) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	if token != "" {
		q.Set("pageToken", token)
	}
	return q
}

// escape is one path segment.
func escape(s string) string { return url.PathEscape(s) }

// IsCode reports whether err is a Problem with the code.
func IsCode(err error, code string) bool {
	var p *Problem
	return errors.As(err, &p) && p.Code == code
}
