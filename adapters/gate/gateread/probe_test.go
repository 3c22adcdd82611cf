package gateread

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// targetServer answers like a collector's health endpoint would, by path.
func targetServer(t *testing.T) (host string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(strings.Repeat("x", 2*probeBodyLimit))) // more than is read
		case "/unavailable":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			<-r.Context().Done() // until the probe gives up
		case "/fleet/edge/stage/canary":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// refusedHost is an address nothing listens on.
func refusedHost(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestProbe(t *testing.T) {
	host := targetServer(t)
	for _, c := range []struct {
		name   string
		probe  policy.Probe
		host   string
		red    bool
		detail string
		error  string // a substring; empty: no error
	}{
		{name: "200", probe: policy.Probe{URL: "http://{host}/ok"}, host: host, detail: "status 200"},
		{name: "503", probe: policy.Probe{URL: "http://{host}/unavailable"}, host: host, red: true, detail: "status 503, want 200"},
		{name: "expected 503", probe: policy.Probe{URL: "http://{host}/unavailable", ExpectStatus: 503}, host: host, detail: "status 503"},
		{name: "templates", probe: policy.Probe{URL: "http://{host}/fleet/{fleet}/stage/{stage}", ExpectStatus: 204}, host: host, detail: "status 204"},
		{name: "redirect not followed", probe: policy.Probe{URL: "http://{host}/moved"}, host: host, red: true, detail: "status 302, want 200"},
		{name: "connection refused", probe: policy.Probe{URL: "http://{host}/ok"}, host: refusedHost(t), red: true, error: "connection refused"},
		{name: "timeout", probe: policy.Probe{URL: "http://{host}/slow", Timeout: 100 * time.Millisecond}, host: host, red: true, error: "no answer within 100ms"},
		{name: "host that is not one", probe: policy.Probe{URL: "http://{host}/ok"}, host: "evil.com/x", red: true, error: "agent a1: host"},
		{name: "no host", probe: policy.Probe{URL: "http://{host}/ok"}, host: "", red: true, error: "no host attribute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := Reader{}.Read(context.Background(), policy.Health{Probes: []policy.Probe{c.probe}},
				gate.Request{Fleet: "edge", Stage: "canary", Hosts: []gate.Host{{AgentID: "a1", Host: c.host}}})
			if len(rs) != 1 {
				t.Fatalf("results %v, want one", rs)
			}
			r := rs[0]
			if r.Kind != gate.KindProbe || r.Name != c.probe.URL || r.Scope != cmp.Or(c.host, "a1") {
				t.Errorf("kind, name, scope = %s, %s, %s", r.Kind, r.Name, r.Scope)
			}
			if r.Red != c.red || r.Detail != c.detail {
				t.Errorf("red %v detail %q, want red %v detail %q (error %q)", r.Red, r.Detail, c.red, c.detail, r.Error)
			}
			if (c.error == "") != (r.Error == "") || !strings.Contains(r.Error, c.error) {
				t.Errorf("error %q, want %q", r.Error, c.error)
			}
		})
	}
}
