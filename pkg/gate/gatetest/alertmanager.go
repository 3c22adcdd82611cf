package gatetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// StartAlertmanager runs Alertmanager with a single receiver that sends
// nowhere, and returns its URL.
func StartAlertmanager(t testing.TB) string {
	t.Helper()
	config, err := json.Marshal(map[string]any{
		"route":     map[string]any{"receiver": "null"},
		"receivers": []any{map[string]any{"name": "null"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server{binary: "prometheus-alertmanager", aptPackage: "prometheus-alertmanager", args: func(addr, dir string) []string {
		return []string{
			"--config.file=" + dir + "/alertmanager.yml",
			"--storage.path=" + dir + "/data",
			"--web.listen-address=" + addr,
			"--cluster.listen-address=", // no gossip: a lone instance, no port of its own
		}
	}}
	return s.start(t, "alertmanager.yml", config)
}

// PostAlert fires an alert with the labels through Alertmanager's v2 API,
// as Prometheus would: it starts now and resolves after Alertmanager's
// resolve_timeout (5m) unless posted again.
func PostAlert(t testing.TB, amURL string, labels map[string]string) {
	t.Helper()
	body, err := json.Marshal([]map[string]any{{"labels": labels}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("post alert: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		t.Fatalf("post alert: status %d: %s", resp.StatusCode, msg)
	}
}
