package gateread

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// The placeholders that policy validation accepts in each field are
// exactly those the readers give a value there: a template the policy
// accepts never reads a placeholder as empty, and one it refuses would.
func TestPlaceholders_AgreeWithPolicy(t *testing.T) {
	names := knownNames(t)
	// tmpl is "fleet={fleet}&region={region}&…": a query string that says
	// which names got a value.
	var pairs []string
	for _, n := range names {
		pairs = append(pairs, n+"={"+n+"}")
	}
	tmpl := strings.Join(pairs, "&")
	withValue := func(t *testing.T, substituted string) []string {
		t.Helper()
		q, err := url.ParseQuery(substituted)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range names {
			if v := q.Get(n); v != "" && v != "{"+n+"}" {
				out = append(out, n)
			}
		}
		return out
	}
	var (
		mu    sync.Mutex
		query string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		query = r.URL.RawQuery
	}))
	defer srv.Close()
	req := gate.Request{Fleet: "edge", Wave: "eu", Stage: "eu/eu-west-1a",
		Passes: []gate.Pass{{Name: "eu-west-1a", Region: "eu-west-1", Zone: "eu-west-1a"}},
		Hosts:  []gate.Host{{AgentID: "a1", Host: strings.TrimPrefix(srv.URL, "http://")}}}

	t.Run("probe url", func(t *testing.T) {
		Reader{}.Read(context.Background(), policy.Health{Probes: []policy.Probe{{URL: "http://{host}/?" + tmpl}}}, req)
		mu.Lock()
		defer mu.Unlock()
		if got := withValue(t, query); !sameSet(got, policy.ProbePlaceholders) {
			t.Errorf("a probe URL gets %v, policy accepts %v", got, policy.ProbePlaceholders)
		}
	})
	t.Run("metric query and dimensions", func(t *testing.T) {
		f := newFakeCloudWatch(t, metricData([]time.Time{cwNow}, []float64{0}))
		h := policy.Health{Metrics: []policy.Metric{
			{Name: "q", Provider: policy.ProviderCloudWatch, Query: tmpl, Max: ptr(1)},
			{Name: "d", CloudWatch: &policy.CloudWatchMetric{Namespace: "N", MetricName: "M", Dimensions: map[string]string{"D": tmpl}}, Max: ptr(1)},
		}}
		readCloudWatch(t, f, h, req)
		if len(f.Calls()) != 2 {
			t.Fatalf("calls %+v, want one per metric", f.Calls())
		}
		for _, c := range f.Calls() {
			q := c.Body["MetricDataQueries"].([]any)[0].(map[string]any)
			got := q["Expression"]
			if ms, ok := q["MetricStat"].(map[string]any); ok {
				got = ms["Metric"].(map[string]any)["Dimensions"].([]any)[0].(map[string]any)["Value"]
			}
			if got := withValue(t, got.(string)); !sameSet(got, policy.StagePlaceholders) {
				t.Errorf("a metric gets %v, policy accepts %v", got, policy.StagePlaceholders)
			}
		}
	})
	t.Run("alarm names and prefix", func(t *testing.T) {
		for _, sel := range alarmSelectors(policy.CloudWatchAlarm{Names: []string{tmpl}, Prefix: tmpl}, req) {
			for _, s := range append(sel.names, sel.prefixes...) {
				if got := withValue(t, s); !sameSet(got, policy.StagePlaceholders) {
					t.Errorf("an alarm %q gets %v, policy accepts %v", sel.name, got, policy.StagePlaceholders)
				}
			}
		}
	})
}

// knownNames are the names Substitute replaces: those the policy lists,
// which must be one for each of Vars' fields.
func knownNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, n := range append(slices.Clone(policy.ProbePlaceholders), policy.StagePlaceholders...) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	all := gate.Vars{Fleet: "f", Region: "r", Zone: "z", Wave: "w", Stage: "s", Host: "h"}
	for _, n := range names {
		if gate.Substitute("{"+n+"}", all) == "{"+n+"}" {
			t.Errorf("policy accepts {%s}, which Substitute does not replace", n)
		}
	}
	if fields := reflect.TypeFor[gate.Vars]().NumField(); len(names) != fields {
		t.Errorf("policy lists %d placeholders %v, Vars has %d fields: a placeholder is missing from policy.ProbePlaceholders or policy.StagePlaceholders", len(names), names, fields)
	}
	return names
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
