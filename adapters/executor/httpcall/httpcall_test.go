package httpcall

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// fakeClock advances only by the sleeps it records.
type fakeClock struct {
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

// answers serves the given handlers in turn, the last one for every later
// try, and counts the tries.
func answers(t *testing.T, hs ...http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		hs[min(i, len(hs)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func call(t *testing.T, url string, clk *fakeClock, retryFor time.Duration) (Response, error) {
	t.Helper()
	c := Caller{Now: clk.Now, Sleep: clk.Sleep}
	return c.Do(context.Background(), Request{Timeout: time.Second, RetryFor: retryFor, New: func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, url+"?token=secret", strings.NewReader("{}"))
	}})
}

func TestDo_RetriesA503ThenAccepts(t *testing.T) {
	srv, tries := answers(t, status(503, "down"), status(503, "down"), status(202, `{"id":"job-7"}`))
	clk := &fakeClock{now: t0}
	res, err := call(t, srv.URL, clk, time.Minute)
	if err != nil || res.Status != 202 || string(res.Body) != `{"id":"job-7"}` || res.Tries != 3 || tries.Load() != 3 {
		t.Fatalf("res %+v err %v tries %d", res, err, tries.Load())
	}
	if want := []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(clk.slept, want) {
		t.Errorf("backoff %v, want %v", clk.slept, want)
	}
}

func TestDo_HonoursRetryAfter(t *testing.T) {
	srv, _ := answers(t, status(429, "slow down", "Retry-After", "7"), status(200, ""))
	clk := &fakeClock{now: t0}
	if _, err := call(t, srv.URL, clk, time.Minute); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(clk.slept, []time.Duration{7 * time.Second}) {
		t.Errorf("slept %v, want the 7s of Retry-After", clk.slept)
	}
	// A Retry-After beyond retryFor ends the call at once.
	srv, tries := answers(t, status(503, "", "Retry-After", "600"))
	clk = &fakeClock{now: t0}
	_, err := call(t, srv.URL, clk, time.Minute)
	var gave *GaveUpError
	if !errors.As(err, &gave) || tries.Load() != 1 || len(clk.slept) != 0 || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err %v after %d tries, slept %v; want a give-up without waiting", err, tries.Load(), clk.slept)
	}
}

// Other 4xx fail at once, with the status and a sanitized excerpt; the
// query (a token?) is not in the message.
func TestDo_A400FailsWithTheExcerpt(t *testing.T) {
	body := `{"error": "unknown host",` + "\n\x1b[31m" + strings.Repeat("x", 300) + `"}`
	srv, tries := answers(t, status(400, body))
	_, err := call(t, srv.URL, &fakeClock{now: t0}, time.Minute)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 400 || tries.Load() != 1 {
		t.Fatalf("err %v after %d tries, want a StatusError at once", err, tries.Load())
	}
	if !strings.HasPrefix(se.Excerpt, `{"error": "unknown host", [31mxxx`) || len(se.Excerpt) > MaxExcerptBytes || !strings.HasSuffix(se.Excerpt, "...") {
		t.Errorf("excerpt %q (%d bytes)", se.Excerpt, len(se.Excerpt))
	}
	if msg := err.Error(); !strings.Contains(msg, "answered 400 Bad Request: ") || strings.Contains(msg, "secret") {
		t.Errorf("message %q", msg)
	}
}

func TestDo_RetriesATimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	srv, tries := answers(t, hang, status(200, "ok"))
	clk := &fakeClock{now: t0}
	c := Caller{Now: clk.Now, Sleep: clk.Sleep}
	res, err := c.Do(context.Background(), Request{Timeout: 50 * time.Millisecond, RetryFor: time.Minute, New: func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	}})
	if err != nil || res.Status != 200 || tries.Load() != 2 || !slices.Equal(clk.slept, []time.Duration{time.Second}) {
		t.Fatalf("res %+v err %v tries %d slept %v", res, err, tries.Load(), clk.slept)
	}
}

// After retryFor the last error ends the call.
func TestDo_GivesUpAfterRetryFor(t *testing.T) {
	srv, tries := answers(t, status(502, "bad gateway"))
	clk := &fakeClock{now: t0}
	_, err := call(t, srv.URL, clk, 20*time.Second)
	var gave *GaveUpError
	var se *StatusError
	if !errors.As(err, &gave) || !errors.As(err, &se) || se.Status != 502 {
		t.Fatalf("err %v, want a give-up around the 502", err)
	}
	// Tries at 0, 1, 3, 7, 15 s; the next would be at 31 s, after 20 s.
	if tries.Load() != 5 || gave.Tries != 5 || !slices.Equal(clk.slept, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}) {
		t.Fatalf("%d tries, slept %v", tries.Load(), clk.slept)
	}
	if !strings.Contains(err.Error(), "gave up after 5 tries in 15s") {
		t.Errorf("message %q", err)
	}
}

// No try starts that could not end, and be stored, before the deadline.
func TestDo_StopsBeforeTheContextDeadline(t *testing.T) {
	srv, tries := answers(t, status(503, ""))
	clk := &fakeClock{now: time.Now()} // the deadline is on the wall clock
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	c := Caller{Now: clk.Now, Sleep: clk.Sleep}
	_, err := c.Do(ctx, Request{Timeout: time.Second, RetryFor: time.Minute, New: func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	}})
	// Tries at 0 and 1 s; one at 3 s would end at 4 s, too close to 8 s with the 5 s margin.
	if err == nil || !strings.Contains(err.Error(), "task's time runs out") || tries.Load() != 2 {
		t.Fatalf("err %v after %d tries", err, tries.Load())
	}
}

func TestDo_RedirectIsNotFollowed(t *testing.T) {
	srv, tries := answers(t, status(307, "", "Location", "https://elsewhere.example/hook"))
	_, err := call(t, srv.URL, &fakeClock{now: t0}, time.Minute)
	if err == nil || tries.Load() != 1 || !strings.Contains(err.Error(), "redirects are not followed") || !strings.Contains(err.Error(), "elsewhere.example") {
		t.Fatalf("err %v after %d tries", err, tries.Load())
	}
}

func TestDo_ConnectionRefusedIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	clk := &fakeClock{now: t0}
	_, err := call(t, url, clk, 4*time.Second)
	if err == nil || len(clk.slept) != 2 || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err %v, slept %v; want two retries and no query in the message", err, clk.slept)
	}
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		try  int
		want time.Duration
	}{
		{try: 1, want: time.Second}, // after the first try
		{try: 2, want: 2 * time.Second},
		{try: 5, want: 16 * time.Second},
		{try: 6, want: 30 * time.Second}, // 32 s, capped
		{try: 60, want: 30 * time.Second},
	} {
		if got := backoff(c.try); got != c.want {
			t.Errorf("backoff(%d) = %s, want %s", c.try, got, c.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": 0, "12": 12 * time.Second, "-1": 0, "soon": 0,
		t0.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		t0.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := retryAfter(v, t0); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{body: "", want: ""},
		{body: "  bad\r\n\tinput  ", want: "bad input"},
		{body: "a\x00b\xffc", want: "a b\uFFFDc"},
		{body: strings.Repeat("é", 150), want: strings.Repeat("é", 98) + "..."}, // 2 bytes each: 196 + 3
		{body: strings.Repeat("y", 200), want: strings.Repeat("y", 200)},        // exactly the limit
	} {
		if got := Excerpt([]byte(c.body)); got != c.want {
			t.Errorf("Excerpt(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}
