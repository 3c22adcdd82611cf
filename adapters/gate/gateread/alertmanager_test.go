package gateread

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/local/gate/gatetest"
)

// TestAlertmanager reads the alerts of a real Alertmanager. Each scenario
// has a fleet of its own, so that the alerts of one do not concern another.
func TestAlertmanager(t *testing.T) {
	am := gatetest.StartAlertmanager(t)
	post := func(labels map[string]string) { gatetest.PostAlert(t, am, labels) }
	post(map[string]string{"alertname": "CollectorDown", "fleet": "regional", "region": "eu-west-1"})
	post(map[string]string{"alertname": "PipelineStalled", "fleet": "fleetwide"})
	post(map[string]string{"alertname": "QueueFilling", "fleet": "severities", "severity": "warning"})
	post(map[string]string{"alertname": "ExporterFailing", "fleet": "critical", "severity": "critical"})
	post(map[string]string{"alertname": "ExporterFailing", "fleet": "silenced", "severity": "critical"})
	silence(t, am, "fleet", "silenced")
	for i, name := range []string{"A", "B", "C", "D"} {
		post(map[string]string{"alertname": name, "fleet": "many", "instance": string(rune('0' + i))})
	}

	critical := []string{"severity=critical"}
	r := Reader{AlertmanagerURL: am}
	for _, c := range []struct {
		name    string
		blockOn []string
		fleet   string
		passes  []gate.Pass
		red     bool
		detail  string
	}{
		{name: "alert of the stage's region", fleet: "regional", passes: []gate.Pass{euPass}, red: true, detail: "1 alert firing: CollectorDown"},
		{name: "alert of another region", fleet: "regional", passes: []gate.Pass{usPass}, detail: "no alert firing"},
		{name: "alert of one of the stage's regions", fleet: "regional", passes: []gate.Pass{usPass, bothPass}, red: true, detail: "1 alert firing: CollectorDown"},
		{name: "alert of another fleet", fleet: "quiet", passes: []gate.Pass{euPass}, detail: "no alert firing"},
		{name: "alert without region: every region", fleet: "fleetwide", passes: []gate.Pass{usPass}, red: true, detail: "1 alert firing: PipelineStalled"},
		{name: "blockOn ignores a warning", blockOn: critical, fleet: "severities", passes: []gate.Pass{euPass}, detail: "no alert firing"},
		{name: "without blockOn a warning blocks", fleet: "severities", passes: []gate.Pass{euPass}, red: true, detail: "1 alert firing: QueueFilling"},
		{name: "blockOn matches a critical", blockOn: critical, fleet: "critical", passes: []gate.Pass{euPass}, red: true, detail: "1 alert firing: ExporterFailing"},
		{name: "a silenced alert does not block", fleet: "silenced", passes: []gate.Pass{euPass}, detail: "no alert firing"},
		{name: "three names and the count", fleet: "many", passes: []gate.Pass{euPass}, red: true, detail: "4 alerts firing: A, B, C, …"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := policy.Health{Alerts: &policy.Alerts{BlockOn: c.blockOn}}
			rs := r.Read(context.Background(), h, gate.Request{Fleet: c.fleet, Passes: c.passes})
			if len(rs) != 1 {
				t.Fatalf("results %v, want one", rs)
			}
			got := rs[0]
			if got.Kind != gate.KindAlert || got.Name != "alertmanager" || got.Scope != "" || got.Error != "" {
				t.Errorf("result %+v", got)
			}
			if got.Red != c.red || got.Detail != c.detail {
				t.Errorf("red %v %q, want red %v %q", got.Red, got.Detail, c.red, c.detail)
			}
		})
	}
}

// silence silences the alerts whose label equals value, for an hour.
func silence(t *testing.T, amURL, label, value string) {
	t.Helper()
	now := time.Now()
	body, _ := json.Marshal(map[string]any{
		"matchers":  []any{map[string]any{"name": label, "value": value, "isRegex": false, "isEqual": true}},
		"startsAt":  now.Add(-time.Minute),
		"endsAt":    now.Add(time.Hour),
		"createdBy": "gate test",
		"comment":   "a silenced alert does not block",
	})
	resp, err := http.Post(amURL+"/api/v2/silences", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("silence: status %d", resp.StatusCode)
	}
}

func TestAlertmanager_Errors(t *testing.T) {
	for _, c := range []struct {
		name    string
		url     string
		blockOn []string
		error   string
	}{
		{name: "unreachable", url: "http://" + refusedHost(t), error: "connection refused"},
		{name: "not an Alertmanager", url: targetURL(t), error: "status 404"},
		{name: "bad blockOn", url: "http://" + refusedHost(t), blockOn: []string{"severity"}, error: "blockOn: matcher"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := policy.Health{Alerts: &policy.Alerts{BlockOn: c.blockOn}}
			rs := Reader{AlertmanagerURL: c.url}.Read(context.Background(), h, gate.Request{Fleet: "edge"})
			if len(rs) != 1 || !rs[0].Red || !strings.Contains(rs[0].Error, c.error) {
				t.Fatalf("results %+v, want one red with error %q", rs, c.error)
			}
		})
	}
}

func targetURL(t *testing.T) string { return "http://" + targetServer(t) }
