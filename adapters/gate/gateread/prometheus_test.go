package gateread

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/local/gate/gatetest"
)

// What the fleet "edge" exports, as Prometheus scrapes it.
const edgeMetrics = `# TYPE myr_error_ratio gauge
myr_error_ratio{fleet="edge",region="eu-west-1"} 0.2
myr_error_ratio{fleet="edge",region="us-east-1"} 0.002
# TYPE myr_throughput gauge
myr_throughput{fleet="edge",region="eu-west-1"} 3
myr_throughput{fleet="edge",region="us-east-1"} NaN
`

var (
	euPass   = gate.Pass{Name: "eu-west-1", Region: "eu-west-1"}
	usPass   = gate.Pass{Name: "us-east-1", Region: "us-east-1"}
	bothPass = gate.Pass{Name: "rest", Region: "eu-west-1|us-east-1"}
)

func ptr(v float64) *float64 { return &v }

// TestPrometheus reads metrics from a real Prometheus that scrapes
// edgeMetrics.
func TestPrometheus(t *testing.T) {
	prom := gatetest.StartPrometheus(t, []string{gatetest.ServeMetrics(t, edgeMetrics)}, 200*time.Millisecond)
	gatetest.WaitForData(t, prom, `myr_throughput`)
	api, err := NewPrometheus(prom, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Reader{Prometheus: api, Now: time.Now}
	const errorRatio = `myr_error_ratio{fleet="{fleet}",region=~"{region}"}`

	for _, c := range []struct {
		name     string
		query    string
		min, max *float64
		pass     gate.Pass
		red      bool
		detail   string
		error    string // a substring; empty: no error
	}{
		{name: "above max", query: errorRatio, max: ptr(0.01), pass: euPass, red: true, detail: "value 0.2 above 0.01"},
		{name: "within max", query: errorRatio, max: ptr(0.01), pass: usPass, detail: "value 0.002 within max 0.01"},
		{name: "one of two series above max", query: errorRatio, max: ptr(0.01), pass: bothPass, red: true, detail: "value 0.2 above 0.01 (highest of 2 series)"},
		{name: "below min", query: `myr_throughput{region="{region}"}`, min: ptr(5), pass: euPass, red: true, detail: "value 3 below 5"},
		{name: "NaN is no data", query: `myr_throughput{region="{region}"}`, min: ptr(5), pass: usPass, red: true, detail: "no data"},
		{name: "no series", query: `myr_error_ratio{fleet="nobody"}`, max: ptr(0.01), pass: euPass, red: true, detail: "no data"},
		{name: "or vector(0)", query: `sum(myr_error_ratio{fleet="nobody"}) or vector(0)`, max: ptr(0.01), pass: euPass, detail: "value 0 within max 0.01"},
		{name: "scalar", query: `scalar(myr_throughput{region="{region}"})`, min: ptr(1), pass: euPass, detail: "value 3 within min 1"},
		{name: "range vector", query: `myr_error_ratio[1m]`, max: ptr(1), pass: euPass, red: true, error: "result is a matrix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := policy.Health{Metrics: []policy.Metric{{Name: "errors", Query: c.query, Min: c.min, Max: c.max}}}
			rs := r.Read(context.Background(), h, gate.Request{Fleet: "edge", Passes: []gate.Pass{c.pass}})
			if len(rs) != 1 {
				t.Fatalf("results %v, want one", rs)
			}
			got := rs[0]
			if got.Kind != gate.KindMetric || got.Name != "errors" || got.Scope != c.pass.Name {
				t.Errorf("kind, name, scope = %s, %s, %s", got.Kind, got.Name, got.Scope)
			}
			if got.Red != c.red || got.Detail != c.detail || !strings.Contains(got.Error, c.error) || (c.error == "") != (got.Error == "") {
				t.Errorf("got red %v detail %q error %q; want red %v detail %q error %q", got.Red, got.Detail, got.Error, c.red, c.detail, c.error)
			}
		})
	}
}

// A query Prometheus refuses is an error of the check, not a breach: red
// with Error set and no Detail of a value.
func TestPrometheus_InvalidQuery(t *testing.T) {
	prom := gatetest.StartPrometheus(t, nil, time.Second)
	api, err := NewPrometheus(prom, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := policy.Health{Metrics: []policy.Metric{{Name: "broken", Query: `rate(myr_error_ratio[5m]`, Max: ptr(1)}}}
	rs := Reader{Prometheus: api, Now: time.Now}.Read(context.Background(), h, gate.Request{Passes: []gate.Pass{euPass}})
	if len(rs) != 1 || !rs[0].Red || rs[0].Value != nil || rs[0].Detail != "" ||
		!strings.Contains(rs[0].Error, "bad_data") || !strings.Contains(rs[0].Error, "parse error") {
		t.Fatalf("results %+v, want one red with a bad_data parse error", rs)
	}
}

func TestPrometheus_Unreachable(t *testing.T) {
	api, err := NewPrometheus("http://"+refusedHost(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := policy.Health{Metrics: []policy.Metric{{Name: "errors", Query: "up", Max: ptr(1)}}}
	rs := Reader{Prometheus: api, Now: time.Now}.Read(context.Background(), h, gate.Request{Passes: []gate.Pass{euPass, usPass}})
	if len(rs) != 2 {
		t.Fatalf("results %v, want one per pass", rs)
	}
	for _, r := range rs {
		if !r.Red || !strings.Contains(r.Error, "connection refused") {
			t.Errorf("result %+v, want red with connection refused", r)
		}
	}
}
