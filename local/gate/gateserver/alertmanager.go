package gateserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// StartAlertmanager runs Alertmanager with a single receiver that sends
// nowhere, with its data in dir.
func StartAlertmanager(dir string) (*Process, error) { return StartAlertmanagerOn("", dir) }

// StartAlertmanagerOn is StartAlertmanager listening on addr (host:port);
// "" picks a free port.
func StartAlertmanagerOn(addr, dir string) (*Process, error) {
	config, err := json.Marshal(map[string]any{
		"route":     map[string]any{"receiver": "null"},
		"receivers": []any{map[string]any{"name": "null"}},
	})
	if err != nil {
		return nil, err
	}
	s := server{binary: "prometheus-alertmanager", aptPackage: "prometheus-alertmanager", addr: addr, args: func(addr, dir string) []string {
		return []string{
			"--config.file=" + dir + "/alertmanager.yml",
			"--storage.path=" + dir + "/data",
			"--web.listen-address=" + addr,
			"--cluster.listen-address=", // no gossip: a lone instance, no port of its own
		}
	}}
	return s.start(dir, "alertmanager.yml", config)
}

// PostAlert fires an alert with the labels through Alertmanager's v2 API,
// as Prometheus would: it starts now and resolves after Alertmanager's
// resolve_timeout (5m) unless posted again.
func PostAlert(ctx context.Context, amURL string, labels map[string]string) error {
	body, err := json.Marshal([]map[string]any{{"labels": labels}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, amURL+"/api/v2/alerts", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post alert: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("post alert: status %d: %s", resp.StatusCode, msg)
	}
	return nil
}
