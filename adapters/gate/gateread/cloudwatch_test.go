package gateread

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

var cwNow = time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)

func at(minutesAgo int) time.Time { return cwNow.Add(-time.Duration(minutesAgo) * time.Minute) }

// metricData is a recorded GetMetricData answer for the gate's query.
func metricData(ts []time.Time, values []float64) cwAnswer {
	return func(string, int, map[string]any) (int, map[string]any) {
		return http.StatusOK, map[string]any{"MetricDataResults": []any{map[string]any{
			"Id": "gate", "Label": "gate", "StatusCode": "Complete", "Timestamps": ts, "Values": values,
		}}}
	}
}

func readCloudWatch(t *testing.T, f *fakeCloudWatch, h policy.Health, req gate.Request) []gate.Result {
	t.Helper()
	return Reader{CloudWatch: f.client, Now: func() time.Time { return cwNow }}.Read(context.Background(), h, req)
}

// onlyCall is the one call of the reading, of the operation.
func onlyCall(t *testing.T, f *fakeCloudWatch, op string) map[string]any {
	t.Helper()
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Op != op {
		t.Fatalf("calls %+v, want one %s", calls, op)
	}
	return calls[0].Body
}

func TestCloudWatch_Expression(t *testing.T) {
	// Recorded out of order: the newest datapoint counts, not the first.
	f := newFakeCloudWatch(t, metricData([]time.Time{at(3), at(1), at(2)}, []float64{0.001, 0.2, 0.001}))
	h := policy.Health{Metrics: []policy.Metric{{
		Name: "errors", Provider: policy.ProviderCloudWatch, Max: ptr(0.01),
		Query: `SELECT AVG(ErrorRate) FROM Myriarch WHERE Fleet = '{fleet}' AND Region = '{region}'`,
	}}}
	rs := readCloudWatch(t, f, h, gate.Request{Fleet: "edge", Passes: []gate.Pass{euPass}})

	want := []gate.Result{{Kind: gate.KindMetric, Name: "errors", Scope: "eu-west-1", Red: true, Value: ptr(0.2), Detail: "value 0.2 above 0.01"}}
	if !reflect.DeepEqual(rs, want) {
		t.Errorf("results %+v, want %+v", rs, want)
	}
	body := onlyCall(t, f, "GetMetricData")
	wantBody := map[string]any{
		"StartTime": at(5), "EndTime": cwNow, "ScanBy": "TimestampDescending",
		"MetricDataQueries": []any{map[string]any{
			"Id": "gate", "ReturnData": true, "Period": float64(60),
			"Expression": `SELECT AVG(ErrorRate) FROM Myriarch WHERE Fleet = 'edge' AND Region = 'eu-west-1'`,
		}},
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request %v,\nwant %v", body, wantBody)
	}
}

func TestCloudWatch_MetricStat(t *testing.T) {
	f := newFakeCloudWatch(t, metricData([]time.Time{at(5), at(10)}, []float64{0.002, 0.5}))
	h := policy.Health{Metrics: []policy.Metric{{
		Name: "errors", Max: ptr(0.01), Lookback: 15 * time.Minute, // no provider: the CloudWatch metric says it
		CloudWatch: &policy.CloudWatchMetric{
			Namespace: "Myriarch", MetricName: "ErrorRate", Stat: "Maximum", Period: 5 * time.Minute,
			Dimensions: map[string]string{"Region": "{region}", "Fleet": "{fleet}"},
		},
	}}}
	rs := readCloudWatch(t, f, h, gate.Request{Fleet: "edge", Passes: []gate.Pass{usPass}})

	if len(rs) != 1 || rs[0].Red || rs[0].Detail != "value 0.002 within max 0.01" || rs[0].Scope != "us-east-1" {
		t.Errorf("results %+v, want green 0.002", rs)
	}
	body := onlyCall(t, f, "GetMetricData")
	if body["StartTime"] != at(15) || body["EndTime"] != cwNow {
		t.Errorf("window %v to %v, want the 15m lookback", body["StartTime"], body["EndTime"])
	}
	wantQuery := []any{map[string]any{
		"Id": "gate", "ReturnData": true,
		"MetricStat": map[string]any{
			"Metric": map[string]any{
				"Namespace": "Myriarch", "MetricName": "ErrorRate",
				"Dimensions": []any{ // sorted by name
					map[string]any{"Name": "Fleet", "Value": "edge"},
					map[string]any{"Name": "Region", "Value": "us-east-1"},
				},
			},
			"Period": float64(300), "Stat": "Maximum",
		},
	}}
	if !reflect.DeepEqual(body["MetricDataQueries"], wantQuery) {
		t.Errorf("queries %v,\nwant %v", body["MetricDataQueries"], wantQuery)
	}
}

func TestCloudWatch_MetricNotRead(t *testing.T) {
	metric := policy.Metric{Name: "errors", Provider: policy.ProviderCloudWatch, Query: "SEARCH('x', 'Average')", Max: ptr(1)}
	for _, c := range []struct {
		name   string
		answer cwAnswer
		detail string
		error  string
	}{
		{name: "no datapoint", answer: metricData(nil, nil), detail: "no data"},
		{
			name: "query failed",
			answer: func(string, int, map[string]any) (int, map[string]any) {
				return http.StatusOK, map[string]any{"MetricDataResults": []any{map[string]any{
					"Id": "gate", "StatusCode": "InternalError",
					"Messages": []any{map[string]any{"Code": "InternalError", "Value": "the search timed out"}},
				}}}
			},
			error: "cloudwatch GetMetricData: status InternalError: the search timed out (InternalError)",
		},
		{
			name: "call refused",
			answer: func(string, int, map[string]any) (int, map[string]any) {
				return http.StatusBadRequest, map[string]any{
					"__type":  "com.amazonaws.cloudwatch#InvalidParameterValueException",
					"message": "The expression is not valid",
				}
			},
			error: "The expression is not valid",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeCloudWatch(t, c.answer)
			rs := readCloudWatch(t, f, policy.Health{Metrics: []policy.Metric{metric}}, gate.Request{Passes: []gate.Pass{euPass}})
			if len(rs) != 1 || !rs[0].Red || rs[0].Detail != c.detail || !strings.Contains(rs[0].Error, c.error) || (c.error == "") != (rs[0].Error == "") {
				t.Errorf("results %+v, want red with detail %q, error %q", rs, c.detail, c.error)
			}
		})
	}
}
