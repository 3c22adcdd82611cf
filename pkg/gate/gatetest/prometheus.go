package gatetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// dataWithin bounds the wait for a first scrape to be queryable: a few
// scrape intervals on a loaded machine.
const dataWithin = 30 * time.Second

// StartPrometheus runs Prometheus scraping the targets (host:port, path
// /metrics) every scrapeInterval, and returns its URL.
func StartPrometheus(t testing.TB, scrapeTargets []string, scrapeInterval time.Duration) string {
	t.Helper()
	// Prometheus reads YAML, and JSON is YAML: encoding/json quotes the
	// targets. Durations in milliseconds, which Prometheus parses ("500ms").
	interval := fmt.Sprintf("%dms", max(1, scrapeInterval.Milliseconds()))
	config, err := json.Marshal(map[string]any{
		"global": map[string]any{
			"scrape_interval":     interval,
			"scrape_timeout":      interval, // the default 10s would exceed a short interval
			"evaluation_interval": interval,
		},
		"scrape_configs": []any{map[string]any{
			"job_name":       "gatetest",
			"static_configs": []any{map[string]any{"targets": scrapeTargets}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server{binary: "prometheus", aptPackage: "prometheus", args: func(addr, dir string) []string {
		return []string{
			"--config.file=" + dir + "/prometheus.yml",
			"--storage.tsdb.path=" + dir + "/data",
			"--web.listen-address=" + addr,
		}
	}}
	return s.start(t, "prometheus.yml", config)
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
	u := promURL + "/api/v1/query?query=" + url.QueryEscape(query)
	err := poll(context.Background(), dataWithin, func() (bool, error) {
		n, err := series(u)
		return n > 0, err
	})
	if err != nil {
		t.Fatalf("prometheus: no data for %s: %v", query, err)
	}
}

func series(u string) (int, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("query: %s", body.Error)
	}
	return len(body.Data.Result), nil
}
