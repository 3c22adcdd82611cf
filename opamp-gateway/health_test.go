package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// A gateway whose store cannot be reached answers /healthz with 503 and the
// reason, so that the load balancer takes it out of service; it is in
// service again once the store answers (after the cache expires).
func TestServe_HealthzFailsWhileTheStoreIsUnreachable(t *testing.T) {
	o, err := parseOptions([]string{"-listen", "127.0.0.1:0", "-health-listen", "127.0.0.1:0", "-drain-timeout", "2s"},
		func(k string) string {
			return map[string]string{"MYRIARCH_TABLE_PREFIX": "test-", "MYRIARCH_AGENT_TOKENS": "tok"}[k]
		})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _, healthAddr, done := startServe(t, ctx, o, make(chan struct{}))
	st.failPing(errors.New("dial tcp 127.0.0.1:8000: connection refused"))
	if code, body := get(t, "http://"+healthAddr.String()+"/healthz"); code != http.StatusServiceUnavailable || body != "store unreachable\n" {
		t.Errorf("healthz with the store down: %d %q, want 503 store unreachable", code, body)
	}
	st.failPing(nil)
	deadline := time.Now().Add(healthCacheFor + 5*time.Second)
	for {
		code, body := get(t, "http://"+healthAddr.String()+"/healthz")
		if code == http.StatusOK && strings.HasPrefix(body, "ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz after the store came back: %d %q, want 200 ok within the cache time", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	<-done
}

// The answer of a check stands for healthCacheFor: checks within it cost no
// read. A check that outlasts its timeout fails.
func TestReadiness_CachesForAFewSeconds(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	now := t0
	calls, fail := 0, error(nil)
	r := newReadiness(func(context.Context) error { calls++; return fail }, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	steps := []struct {
		at        time.Duration
		fail      error
		wantErr   bool
		wantCalls int
	}{
		{at: 0, wantCalls: 1},               // first check reads
		{at: 3 * time.Second, wantCalls: 1}, // cached
		{at: 5 * time.Second, fail: errStoreUnreachable, wantErr: true, wantCalls: 2}, // expired: reads, fails
		{at: 9 * time.Second, wantErr: true, wantCalls: 2},                            // the failure is cached too
		{at: 10 * time.Second, wantCalls: 3},                                          // back
	}
	for i, s := range steps {
		now, fail = t0.Add(s.at), s.fail
		err := r.ready(context.Background())
		if (err != nil) != s.wantErr || calls != s.wantCalls {
			t.Errorf("step %d (+%s): error %v after %d checks, want error %v after %d", i, s.at, err, calls, s.wantErr, s.wantCalls)
		}
	}

	slow := newReadiness(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	slow.timeout = 20 * time.Millisecond
	if err := slow.ready(context.Background()); shortReason(err) != "store check timed out" {
		t.Errorf("a hanging store: %v (%q), want a timeout", err, shortReason(err))
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel() // the load balancer hung up: the check still runs
	if err := newReadiness(func(ctx context.Context) error { return ctx.Err() }, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil))).ready(canceled); err != nil {
		t.Errorf("a check for a request that went away: %v, want it to run to its end", err)
	}
}

type pingFunc func(context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }

// The gateway's check: credentials first, then the store.
func TestStoreCheck(t *testing.T) {
	ok := pingFunc(func(context.Context) error { return nil })
	down := pingFunc(func(context.Context) error { return errors.New("connection refused") })
	static := credentials.NewStaticCredentialsProvider("AKID", "secret", "")
	none := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("failed to refresh cached credentials, no EC2 IMDS role found")
	})
	tests := []struct {
		name  string
		creds aws.CredentialsProvider
		st    pinger
		want  string // short reason; "" = ready
	}{
		{name: "ready", creds: static, st: ok},
		{name: "no provider", creds: nil, st: ok, want: "no AWS credentials"},
		{name: "credentials do not resolve", creds: none, st: ok, want: "no AWS credentials"},
		{name: "store down", creds: static, st: down, want: "store unreachable"},
	}
	for _, tt := range tests {
		got := ""
		err := storeCheck(tt.creds, tt.st)(context.Background())
		if err != nil {
			got = shortReason(err)
		}
		if got != tt.want {
			t.Errorf("%s: %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
}
