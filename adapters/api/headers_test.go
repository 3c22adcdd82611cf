package api

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHeaders_OverTheLimitIs431Problem: a request line and header over
// MaxHeaderBytes are refused by the API in its format, before the token is
// looked at, and nothing changes.
func TestHeaders_OverTheLimitIs431Problem(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	r := post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")
	r.header = map[string]string{"X-Padding": strings.Repeat("a", MaxHeaderBytes)}
	before, audits := h.store.snapshot(), h.store.auditLen()
	p := wantProblem(t, h.do(r), http.StatusRequestHeaderFieldsTooLarge, CodeHeaderTooLarge)
	if !strings.Contains(p.Detail, "65536") {
		t.Errorf("detail %q, want the limit", p.Detail)
	}
	if h.store.snapshot() != before || h.store.auditLen() != audits {
		t.Errorf("a refused request changed the store")
	}
	r.token = ""
	wantProblem(t, h.do(r), http.StatusRequestHeaderFieldsTooLarge, CodeHeaderTooLarge)

	r = get("/api/v1/rollouts", RoleViewer)
	r.header = map[string]string{"Cookie": strings.Repeat("c", 32<<10)} // a browser's cookies for localhost
	wantOK(t, h.do(r))
}

// TestHeaders_AMegabyteReachesTheAPI: a header a little over 1 MiB is
// refused by net/http itself (text/plain) under its default MaxHeaderBytes;
// with the server's limit at ServerMaxHeaderBytes (the local stack's) it
// reaches the API, which answers with its problem.
func TestHeaders_AMegabyteReachesTheAPI(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewUnstartedServer(h.srv.Config.Handler)
	srv.Config.MaxHeaderBytes = ServerMaxHeaderBytes
	srv.Start()
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		url, contentType string
	}{
		{url: h.srv.URL, contentType: "text/plain; charset=utf-8"}, // net/http's DefaultMaxHeaderBytes
		{url: srv.URL, contentType: "application/problem+json"},
	} {
		hr, _ := http.NewRequest(http.MethodGet, c.url+"/api/v1/rollouts", nil)
		hr.Header.Set("X-Padding", strings.Repeat("a", 1<<20+8<<10))
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != c.contentType {
			t.Errorf("status %d, %s; want 431 %s", resp.StatusCode, resp.Header.Get("Content-Type"), c.contentType)
		}
	}
}

// TestHeaders_NULByteIsNetHTTPsAnswer pins what docs/deploy.md says: a
// header value with a NUL byte is refused by net/http while it reads the
// request, before any handler, with its text/plain 400; the API cannot
// answer it (no hook of http.Server sees the request). When this test
// fails, Go changed, and the docs need a look.
func TestHeaders_NULByteIsNetHTTPsAnswer(t *testing.T) {
	h := newHarness(t)
	conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("GET /api/v1/me HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer " + tokens[RoleViewer] + "\r\nX-Bad: a\x00b\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || resp.Header.Get("X-Request-Id") != "" {
		t.Errorf("status %d, %s, request id %q: net/http's answer changed", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-Request-Id"))
	}
}
