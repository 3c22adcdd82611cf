package gateserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// StartPrometheus runs Prometheus scraping the targets (host:port, path
// /metrics) every scrapeInterval, with its data in dir.
func StartPrometheus(dir string, scrapeTargets []string, scrapeInterval time.Duration) (*Process, error) {
	return StartPrometheusOn("", dir, scrapeTargets, scrapeInterval)
}

// StartPrometheusOn is StartPrometheus listening on addr (host:port), the
// address a deployment's settings already name; "" picks a free port.
func StartPrometheusOn(addr, dir string, scrapeTargets []string, scrapeInterval time.Duration) (*Process, error) {
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
		return nil, err
	}
	s := server{binary: "prometheus", aptPackage: "prometheus", addr: addr, args: func(addr, dir string) []string {
		return []string{
			"--config.file=" + dir + "/prometheus.yml",
			"--storage.tsdb.path=" + dir + "/data",
			"--web.listen-address=" + addr,
		}
	}}
	return s.start(dir, "prometheus.yml", config)
}

// WaitForData waits until the instant query returns at least one series
// (Prometheus has scraped the targets it needs), at most within.
func WaitForData(ctx context.Context, promURL, query string, within time.Duration) error {
	u := promURL + "/api/v1/query?query=" + url.QueryEscape(query)
	err := poll(ctx, within, func() (bool, error) {
		n, err := series(u)
		return n > 0, err
	})
	if err != nil {
		return fmt.Errorf("prometheus: no data for %s: %w", query, err)
	}
	return nil
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
