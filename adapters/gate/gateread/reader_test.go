package gateread

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

func fixedNow() time.Time { return cwNow }

// brief is what a test compares of a result.
type brief struct {
	Kind   gate.Kind
	Name   string
	Scope  string
	Red    bool
	Error  string
	DryRun bool
}

func briefs(rs []gate.Result) []brief {
	out := make([]brief, len(rs))
	for i, r := range rs {
		out[i] = brief{Kind: r.Kind, Name: r.Name, Scope: r.Scope, Red: r.Red, Error: r.Error, DryRun: r.DryRun}
	}
	return out
}

// Every provider missing: each check is red with an error naming the
// setting, in the order of the results, and dry runs say so.
func TestRead_NotConfigured(t *testing.T) {
	h := policy.Health{
		Metrics: []policy.Metric{
			{Name: "latency", Provider: policy.ProviderCloudWatch, Query: "SEARCH('x', 'Average')", DryRun: true},
			{Name: "errors", Query: "up"},
		},
		Alerts: &policy.Alerts{BlockOn: []string{"severity=critical"}, CloudWatchAlarms: &policy.CloudWatchAlarm{Prefix: "edge-"}},
	}
	rs := Reader{Now: fixedNow}.Read(context.Background(), h, gate.Request{Fleet: "edge", Passes: []gate.Pass{usPass, euPass}})
	want := []brief{
		{Kind: gate.KindMetric, Name: "errors", Scope: "eu-west-1", Red: true, Error: errNoPrometheus},
		{Kind: gate.KindMetric, Name: "errors", Scope: "us-east-1", Red: true, Error: errNoPrometheus},
		{Kind: gate.KindMetric, Name: "latency", Scope: "eu-west-1", Red: true, Error: errNoCloudWatch, DryRun: true},
		{Kind: gate.KindMetric, Name: "latency", Scope: "us-east-1", Red: true, Error: errNoCloudWatch, DryRun: true},
		{Kind: gate.KindAlert, Name: "alertmanager", Red: true, Error: errNoAlertmanager},
		{Kind: gate.KindAlarm, Name: "edge-*", Red: true, Error: errNoCloudWatch},
	}
	if got := briefs(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("results\n%+v\nwant\n%+v", got, want)
	}
}

// Probes come first, by URL and host; then metrics by name and pass; then
// alerts. Dry runs are marked on every result of their check.
func TestRead_OrderAndDryRun(t *testing.T) {
	host := targetServer(t)
	h := policy.Health{
		Probes: []policy.Probe{
			{URL: "http://{host}/unavailable", DryRun: true},
			{URL: "http://{host}/ok"},
		},
		Metrics: []policy.Metric{{Name: "b", Query: "up"}, {Name: "a", Query: "up", DryRun: true}},
		Alerts:  &policy.Alerts{DryRun: true},
	}
	hosts := []gate.Host{{AgentID: "2", Host: host}, {AgentID: "1", Host: "127.0.0.1:1"}}
	rs := Reader{Now: fixedNow}.Read(context.Background(), h, gate.Request{Hosts: hosts, Passes: []gate.Pass{usPass, euPass}})
	var got []string
	for _, r := range rs {
		got = append(got, r.String())
	}
	want := []string{
		"probe http://{host}/ok (127.0.0.1:1): error: ", // connection refused, the text is the OS's
		"probe http://{host}/ok (" + host + "): status 200",
		"probe http://{host}/unavailable (127.0.0.1:1): error: ",
		"probe http://{host}/unavailable (" + host + "): status 503, want 200 [dry run]",
		"metric a (eu-west-1): error: " + errNoPrometheus + " [dry run]",
		"metric a (us-east-1): error: " + errNoPrometheus + " [dry run]",
		"metric b (eu-west-1): error: " + errNoPrometheus,
		"metric b (us-east-1): error: " + errNoPrometheus,
		"alert alertmanager: error: " + errNoAlertmanager + " [dry run]",
	}
	if len(got) != len(want) {
		t.Fatalf("results\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("result %d: %q, want %q", i, got[i], want[i])
		}
	}
	if !strings.HasSuffix(got[2], "[dry run]") || strings.HasSuffix(got[0], "[dry run]") {
		t.Errorf("dry run of the failing probe: %q, %q", got[0], got[2])
	}
}

// A batch gate reads the probes and nothing else.
func TestRead_ProbesOnly(t *testing.T) {
	h := policy.Health{
		Probes:  []policy.Probe{{URL: "http://{host}/ok"}},
		Metrics: []policy.Metric{{Name: "errors", Query: "up"}},
		Alerts:  &policy.Alerts{},
	}
	rs := Reader{}.Read(context.Background(), h, gate.Request{ProbesOnly: true, Hosts: []gate.Host{{Host: targetServer(t)}}, Passes: []gate.Pass{euPass}})
	if len(rs) != 1 || rs[0].Kind != gate.KindProbe || rs[0].Red {
		t.Errorf("results %+v, want the one green probe", rs)
	}
}

// Without passes the metrics are still read, once for the stage: a request
// built wrong cannot skip them.
func TestRead_NoPassesReadsMetricsOnce(t *testing.T) {
	h := policy.Health{Metrics: []policy.Metric{{Name: "errors", Query: "up"}}}
	rs := Reader{Now: fixedNow}.Read(context.Background(), h, gate.Request{Fleet: "edge"})
	want := []brief{{Kind: gate.KindMetric, Name: "errors", Red: true, Error: errNoPrometheus}}
	if got := briefs(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("results %+v, want %+v", got, want)
	}
}

func TestRead_ProgrammingErrorsAreRed(t *testing.T) {
	for _, c := range []struct {
		name   string
		reader Reader
		metric policy.Metric
		error  string
	}{
		{name: "no clock", reader: Reader{}, metric: policy.Metric{Name: "m", Query: "up"}, error: "no clock"},
		{name: "unknown provider", reader: Reader{Now: fixedNow}, metric: policy.Metric{Name: "m", Provider: "datadog"}, error: `unknown metric provider "datadog"`},
		{name: "panicking client", reader: Reader{Now: fixedNow, CloudWatch: panicking{}}, metric: policy.Metric{Name: "m", Provider: policy.ProviderCloudWatch, Query: "x"}, error: "panic: the client broke"},
		{name: "neither query nor metric", reader: Reader{Now: fixedNow, CloudWatch: panicking{}}, metric: policy.Metric{Name: "m", Provider: policy.ProviderCloudWatch}, error: "neither query nor cloudwatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := c.reader.Read(context.Background(), policy.Health{Metrics: []policy.Metric{c.metric}}, gate.Request{Passes: []gate.Pass{euPass}})
			if len(rs) != 1 || !rs[0].Red || !strings.Contains(rs[0].Error, c.error) {
				t.Errorf("results %+v, want red with %q", rs, c.error)
			}
		})
	}
}

type panicking struct{ CloudWatchAPI }

func (panicking) GetMetricData(context.Context, *cloudwatch.GetMetricDataInput, ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	panic("the client broke")
}

// MaxConcurrent bounds the probes in flight, and they do run side by side.
func TestRead_BoundedConcurrency(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	defer srv.Close()
	hosts := make([]gate.Host, 24)
	for i := range hosts {
		hosts[i] = gate.Host{Host: strings.TrimPrefix(srv.URL, "http://")}
	}
	rs := Reader{MaxConcurrent: 4}.Read(context.Background(), policy.Health{Probes: []policy.Probe{{URL: "http://{host}/"}}}, gate.Request{Hosts: hosts})
	if len(rs) != len(hosts) {
		t.Fatalf("%d results, want %d", len(rs), len(hosts))
	}
	for _, r := range rs {
		if r.Red {
			t.Fatalf("probe %v", r)
		}
	}
	if most > 4 || most < 2 {
		t.Errorf("%d probes at once, want 2 to 4", most)
	}
}
