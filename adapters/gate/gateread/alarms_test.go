package gateread

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

func TestCloudWatch_AlarmsByName(t *testing.T) {
	f := newFakeCloudWatch(t, func(string, int, map[string]any) (int, map[string]any) {
		return http.StatusOK, map[string]any{"MetricAlarms": []any{map[string]any{
			"AlarmName": "collector-errors-eu-west-1", "StateValue": "ALARM", "StateUpdatedTimestamp": at(7),
		}}}
	})
	h := policy.Health{Alerts: &policy.Alerts{CloudWatchAlarms: &policy.CloudWatchAlarm{
		Names: []string{"collector-errors-{region}", "fleet-{fleet}"},
	}}}
	rs := readCloudWatch(t, f, h, gate.Request{Fleet: "edge", Passes: []gate.Pass{euPass, bothPass}})

	// Only the alarms: no blockOn, so Alertmanager was not asked for.
	want := []gate.Result{{Kind: gate.KindAlarm, Name: "collector-errors-{region}, fleet-{fleet}", Red: true, Detail: "1 alarm firing: collector-errors-eu-west-1"}}
	if !reflect.DeepEqual(rs, want) {
		t.Errorf("results %+v, want %+v", rs, want)
	}
	body := onlyCall(t, f, "DescribeAlarms")
	wantBody := map[string]any{
		"AlarmNames": []any{"collector-errors-eu-west-1", "collector-errors-us-east-1", "fleet-edge"}, // each once
		"StateValue": "ALARM",
		"AlarmTypes": []any{"MetricAlarm", "CompositeAlarm"},
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request %v,\nwant %v", body, wantBody)
	}
}

func TestCloudWatch_AlarmsByPrefix_Paginated(t *testing.T) {
	f := newFakeCloudWatch(t, func(_ string, n int, _ map[string]any) (int, map[string]any) {
		if n == 0 {
			return http.StatusOK, map[string]any{
				"MetricAlarms": []any{map[string]any{"AlarmName": "edge-latency", "StateValue": "ALARM", "StateUpdatedTimestamp": at(2)}},
				"NextToken":    "page-2",
			}
		}
		return http.StatusOK, map[string]any{
			"CompositeAlarms": []any{map[string]any{"AlarmName": "edge-health", "StateValue": "ALARM", "StateUpdatedTimestamp": at(9)}},
		}
	})
	h := policy.Health{Alerts: &policy.Alerts{DryRun: true, CloudWatchAlarms: &policy.CloudWatchAlarm{Prefix: "{fleet}-"}}}
	rs := readCloudWatch(t, f, h, gate.Request{Fleet: "edge", Passes: []gate.Pass{euPass}})

	// The longest in ALARM first; a dry run is red but does not block.
	want := []gate.Result{{Kind: gate.KindAlarm, Name: "{fleet}-*", Red: true, Detail: "2 alarms firing: edge-health, edge-latency", DryRun: true}}
	if !reflect.DeepEqual(rs, want) || rs[0].Blocking() {
		t.Errorf("results %+v, want %+v", rs, want)
	}
	calls := f.Calls()
	if len(calls) != 2 || calls[0].Body["AlarmNamePrefix"] != "edge-" || calls[1].Body["NextToken"] != "page-2" || calls[1].Body["AlarmNamePrefix"] != "edge-" {
		t.Errorf("calls %+v, want two pages of prefix edge-", calls)
	}
}

func TestCloudWatch_NoAlarm(t *testing.T) {
	f := newFakeCloudWatch(t, func(string, int, map[string]any) (int, map[string]any) {
		return http.StatusOK, map[string]any{"MetricAlarms": []any{}}
	})
	h := policy.Health{Alerts: &policy.Alerts{CloudWatchAlarms: &policy.CloudWatchAlarm{Names: []string{"quiet"}}}}
	rs := readCloudWatch(t, f, h, gate.Request{Fleet: "edge"})
	if len(rs) != 1 || rs[0].Red || rs[0].Detail != "no alarm firing" {
		t.Errorf("results %+v, want green", rs)
	}
}

// Names go 100 a call (DescribeAlarms' limit), each prefix in a call of its
// own; names and prefix are two checks.
func TestAlarmSelectorsAndInputs(t *testing.T) {
	names := make([]string, 150)
	for i := range names {
		names[i] = fmt.Sprintf("alarm-%03d-{region}", i)
	}
	sels := alarmSelectors(policy.CloudWatchAlarm{Names: names, Prefix: "{fleet}-{region}-"},
		gate.Request{Fleet: "edge", Passes: []gate.Pass{bothPass}})
	if len(sels) != 2 || sels[1].name != "{fleet}-{region}-*" {
		t.Fatalf("selectors %+v, want names and prefix", sels)
	}
	byNames, byPrefix := alarmInputs(sels[0]), alarmInputs(sels[1])
	if len(byNames) != 3 || len(byNames[0].AlarmNames) != 100 || len(byNames[2].AlarmNames) != 100 {
		t.Errorf("%d calls for 300 names (150 templates × 2 regions)", len(byNames))
	}
	var prefixes []string
	for _, in := range byPrefix {
		prefixes = append(prefixes, *in.AlarmNamePrefix)
	}
	if want := []string{"edge-eu-west-1-", "edge-us-east-1-"}; !reflect.DeepEqual(prefixes, want) {
		t.Errorf("prefixes %q, want %q", prefixes, want)
	}
}
