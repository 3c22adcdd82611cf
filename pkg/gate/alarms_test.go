package gate

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/pkg/policy"
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
	rs := readCloudWatch(t, f, h, Request{Fleet: "edge", Passes: []Pass{euPass, bothPass}})

	// Only the alarms: no blockOn, so Alertmanager was not asked for.
	want := []Result{{Kind: KindAlarm, Name: "collector-errors-{region}, fleet-{fleet}", Red: true, Detail: "1 alarm firing: collector-errors-eu-west-1"}}
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
	rs := readCloudWatch(t, f, h, Request{Fleet: "edge", Passes: []Pass{euPass}})

	// The longest in ALARM first; a dry run is red but does not block.
	want := []Result{{Kind: KindAlarm, Name: "{fleet}-*", Red: true, Detail: "2 alarms firing: edge-health, edge-latency", DryRun: true}}
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
	rs := readCloudWatch(t, f, h, Request{Fleet: "edge"})
	if len(rs) != 1 || rs[0].Red || rs[0].Detail != "no alarm firing" {
		t.Errorf("results %+v, want green", rs)
	}
}
