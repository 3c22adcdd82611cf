package gatetest

import (
	"context"
	"testing"

	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// StartAlertmanager runs Alertmanager with a single receiver that sends
// nowhere, and returns its URL.
func StartAlertmanager(t testing.TB) string {
	t.Helper()
	p, err := gateserver.StartAlertmanager(t.TempDir())
	return started(t, p, err)
}

// PostAlert fires an alert with the labels through Alertmanager's v2 API,
// as Prometheus would.
func PostAlert(t testing.TB, amURL string, labels map[string]string) {
	t.Helper()
	if err := gateserver.PostAlert(context.Background(), amURL, labels); err != nil {
		t.Fatal(err)
	}
}
