package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/page"
)

// Page sizes of the lists.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// query reads the query parameters strictly: an unknown parameter or one
// given twice is a 400, so that a misspelled filter does not silently
// list everything.
type query struct {
	v       url.Values
	allowed map[string]bool
}

func newQuery(r *http.Request, allowed ...string) (query, *Problem) {
	// url.URL.Query drops a pair it cannot decode (a broken escape such as
	// %ZZ, a ';'): the filter would be ignored and everything listed.
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return query{}, badRequest("the query string cannot be decoded: %s", clip(err.Error(), 200))
	}
	q := query{v: v, allowed: map[string]bool{}}
	for _, a := range allowed {
		q.allowed[a] = true
	}
	for k, vs := range q.v {
		if !q.allowed[k] {
			return q, badRequest("unknown query parameter %q", k)
		}
		if len(vs) > 1 {
			return q, badRequest("query parameter %q is given %d times", k, len(vs))
		}
	}
	return q, nil
}

func (q query) get(k string) string { return q.v.Get(k) }

// page reads limit (1 to MaxLimit, default DefaultLimit) and pageToken.
func (q query) page() (limit int, token string, p *Problem) {
	limit = DefaultLimit
	if s := q.get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return 0, "", badRequest("limit must be a whole number from 1 to %d, not %q", MaxLimit, s)
		}
		limit = n
	}
	return limit, q.get("pageToken"), nil
}

// list reads a comma-separated filter whose values must be in valid.
func (q query) list(k string, valid func(string) bool) ([]string, *Problem) {
	s := q.get(k)
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, v := range strings.Split(s, ",") {
		if !valid(v) {
			return nil, badRequest("%s %q is not one of the documented values", k, v)
		}
		out = append(out, v)
	}
	return out, nil
}

func badRequest(format string, args ...any) *Problem {
	return problem(http.StatusBadRequest, CodeRequestInvalid, fmt.Sprintf(format, args...))
}

// pageError turns a bad page token into a 400 and passes other errors on.
func pageError(err error) error {
	if errors.Is(err, page.ErrBadToken) {
		return badRequest("pageToken is not a token this server issued")
	}
	return err
}
