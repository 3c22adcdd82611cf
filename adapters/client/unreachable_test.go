package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDo_ConnectionRefused: nothing listens at the URL; the error names the
// URL tried (without /api/v1 and without a password) and the reason.
func TestDo_ConnectionRefused(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	u, _ := url.Parse(gone.URL)
	u.User = url.UserPassword("ops", "hunter2")
	_, err := New(u.String()+"/api/v1/", "t").Me(t.Context())
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Reason != "connection refused" || ue.Method != "GET" || ue.Path != "/api/v1/me" {
		t.Fatalf("error %#v, want an UnreachableError of GET /api/v1/me, connection refused", err)
	}
	want := "cannot reach the API at http://ops:xxxxx@" + u.Host + " (connection refused)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the cause is not kept: %v", err)
	}
}

// TestDo_Timeout: an API that does not answer within the client's timeout.
func TestDo_Timeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	c := New(slow.URL, "t")
	c.HTTP = &http.Client{Timeout: 50 * time.Millisecond}
	_, err := c.Me(t.Context())
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Reason != "timed out" {
		t.Fatalf("error %v, want an UnreachableError that timed out", err)
	}
}

// TestDo_CancelledIsNotUnreachable: the end of the caller's context (Ctrl-C)
// is no failure of the API.
func TestDo_CancelledIsNotUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := New("http://127.0.0.1:1", "t").Me(ctx)
	var ue *UnreachableError
	if errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled and no UnreachableError", err)
	}
}

func TestUnreachableReason(t *testing.T) {
	op := func(err error) error {
		return &url.Error{Op: "Get", URL: "http://api.example:8080/api/v1/me", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	cases := []struct {
		err  error
		want string
	}{
		{err: op(os.NewSyscallError("connect", syscall.ECONNREFUSED)), want: "connection refused"},
		{err: op(&net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}), want: "no such host api.example"},
		{err: op(&net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}), want: "DNS lookup of api.example failed: server misbehaving"},
		{err: op(&net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}), want: "DNS lookup of api.example failed: i/o timeout"},
		{err: op(os.NewSyscallError("read", syscall.ECONNRESET)), want: "connection reset"},
		{err: op(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), want: "no route to the host"},
		{err: &url.Error{Op: "Get", URL: "x", Err: context.DeadlineExceeded}, want: "timed out"},
		{err: op(errors.New("something else")), want: "something else"},
	}
	for _, c := range cases {
		if got := unreachableReason(c.err); got != c.want {
			t.Errorf("unreachableReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
