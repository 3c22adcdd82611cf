package gatetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// dataWithin bounds the wait for a first scrape to be queryable: a few
// scrape intervals on a loaded machine.
const dataWithin = 30 * time.Second

// StartPrometheus runs Prometheus scraping the targets (host:port, path
// /metrics) every scrapeInterval, and returns its URL.
func StartPrometheus(t testing.TB, scrapeTargets []string, scrapeInterval time.Duration) string {
	t.Helper()
	p, err := gateserver.StartPrometheus(t.TempDir(), scrapeTargets, scrapeInterval)
	return started(t, p, err)
}

// ServeMetrics serves the exposition text at /metrics for Prometheus to
// scrape, and returns the server's host:port.
func ServeMetrics(t testing.TB, exposition string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(exposition))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// WaitForData waits until the instant query returns at least one series:
// Prometheus has scraped the targets it needs.
func WaitForData(t testing.TB, promURL, query string) {
	t.Helper()
	if err := gateserver.WaitForData(context.Background(), promURL, query, dataWithin); err != nil {
		t.Fatal(err)
	}
}
