package gate

import (
	"math"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

func TestSubstitute(t *testing.T) {
	v := Vars{Fleet: "edge", Region: "eu-west-1", Zone: "eu-west-1a", Wave: "2", Stage: "canary", Host: "10.0.0.7"}
	for _, c := range []struct{ tmpl, want string }{
		{tmpl: "{fleet}/{region}/{zone}/{wave}/{stage}/{host}", want: "edge/eu-west-1/eu-west-1a/2/canary/10.0.0.7"},
		{tmpl: `rate(errors{fleet="{fleet}",region=~"{region}"}[5m])`, want: `rate(errors{fleet="edge",region=~"eu-west-1"}[5m])`}, // PromQL braces stay
		{tmpl: "{unknown} {Fleet} {fleet", want: "{unknown} {Fleet} {fleet"},                                                       // unknown, case, unclosed
		{tmpl: "{fleet}{fleet}", want: "edgeedge"},                                                                                 // every occurrence
		{tmpl: "", want: ""},
	} {
		if got := Substitute(c.tmpl, v); got != c.want {
			t.Errorf("Substitute(%q) = %q, want %q", c.tmpl, got, c.want)
		}
	}
	// A value is not substituted again.
	if got := Substitute("{fleet}", Vars{Fleet: "{host}", Host: "h"}); got != "{host}" {
		t.Errorf("value substituted again: %q", got)
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name     string
		value    float64
		hasData  bool
		min, max *float64
		red      bool
		detail   string
	}{
		{name: "no data", hasData: false, max: ptr(0.01), red: true, detail: "no data"},
		{name: "NaN is no data", value: math.NaN(), hasData: true, max: ptr(0.01), red: true, detail: "no data"},
		{name: "above max", value: 0.2, hasData: true, max: ptr(0.01), red: true, detail: "value 0.2 above 0.01"},
		{name: "at max", value: 0.01, hasData: true, max: ptr(0.01), detail: "value 0.01 within max 0.01"},
		{name: "below max", value: 0.002, hasData: true, max: ptr(0.01), detail: "value 0.002 within max 0.01"},
		{name: "below min", value: 3, hasData: true, min: ptr(5), red: true, detail: "value 3 below 5"},
		{name: "at min", value: 5, hasData: true, min: ptr(5), detail: "value 5 within min 5"},
		{name: "both, within", value: 7, hasData: true, min: ptr(5), max: ptr(10), detail: "value 7 within min 5, max 10"},
		{name: "both, above", value: 11, hasData: true, min: ptr(5), max: ptr(10), red: true, detail: "value 11 above 10"},
		{name: "+Inf above max", value: math.Inf(1), hasData: true, max: ptr(1), red: true, detail: "value +Inf above 1"},
		{name: "no bound: data is enough", value: 0, hasData: true, detail: "value 0, no bound"},
		{name: "large numbers in 'g' -1", value: 1234567, hasData: true, max: ptr(1e6), red: true, detail: "value 1.234567e+06 above 1e+06"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Judge("errors", "eu-west-1", c.value, c.hasData, c.min, c.max)
			if r.Red != c.red || r.Detail != c.detail || r.Kind != KindMetric || r.Name != "errors" || r.Scope != "eu-west-1" {
				t.Errorf("got %+v, want red %v detail %q", r, c.red, c.detail)
			}
			if hasValue := r.Value != nil; hasValue != (c.detail != "no data") {
				t.Errorf("value %v for %q", r.Value, c.detail)
			}
		})
	}
}

func TestJudgeSeries(t *testing.T) {
	for _, c := range []struct {
		name     string
		values   []float64
		min, max *float64
		red      bool
		detail   string
		value    float64
	}{
		{name: "none", values: nil, max: ptr(1), red: true, detail: "no data"},
		{name: "only NaN", values: []float64{math.NaN(), math.NaN()}, max: ptr(1), red: true, detail: "no data"},
		{name: "one", values: []float64{0.5}, max: ptr(1), detail: "value 0.5 within max 1", value: 0.5},
		{name: "one and NaN", values: []float64{math.NaN(), 2}, max: ptr(1), red: true, detail: "value 2 above 1", value: 2},
		{name: "highest meets max", values: []float64{0.002, 0.2}, max: ptr(0.01), red: true, detail: "value 0.2 above 0.01 (highest of 2 series)", value: 0.2},
		{name: "lowest meets min", values: []float64{9, 3, 7}, min: ptr(5), red: true, detail: "value 3 below 5 (lowest of 3 series)", value: 3},
		{name: "max checked before min", values: []float64{0, 20}, min: ptr(5), max: ptr(10), red: true, detail: "value 20 above 10 (highest of 2 series)", value: 20},
		{name: "all within max", values: []float64{0.001, 0.004}, max: ptr(0.01), detail: "2 series from 0.001 to 0.004 within max 0.01", value: 0.004},
		{name: "all within min: the lowest is the value", values: []float64{6, 9}, min: ptr(5), detail: "2 series from 6 to 9 within min 5", value: 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := JudgeSeries("m", "p", c.values, c.min, c.max)
			if r.Red != c.red || r.Detail != c.detail {
				t.Errorf("got red %v %q, want red %v %q", r.Red, r.Detail, c.red, c.detail)
			}
			if c.detail != "no data" && (r.Value == nil || *r.Value != c.value) {
				t.Errorf("value %v, want %v", r.Value, c.value)
			}
		})
	}
}

func TestFiring(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{names: nil, want: "no alert firing"},
		{names: []string{"A"}, want: "1 alert firing: A"},
		{names: []string{"A", "B"}, want: "2 alerts firing: A, B"},
		{names: []string{"A", "A"}, want: "2 alerts firing: A"},                         // a name once, the count of alerts
		{names: []string{"A", "B", "C", "D", "A"}, want: "5 alerts firing: A, B, C, …"}, // at most 3 names
		{names: []string{""}, want: "1 alert firing: (unnamed)"},
	} {
		if got := Firing("alert", c.names); got != c.want {
			t.Errorf("Firing(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

func TestValidHost(t *testing.T) {
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{host: "10.0.0.7", ok: true},
		{host: "collector-1.internal", ok: true},
		{host: "10.0.0.7:13133", ok: true},
		{host: "[::1]", ok: true},
		{host: "", ok: false},
		{host: "evil.com/x", ok: false},
		{host: "user@evil.com", ok: false},
		{host: "a?b", ok: false},
		{host: "a#b", ok: false},
		{host: "a b", ok: false},
		{host: "a\nb", ok: false},
		{host: "a%2fb", ok: false},
	} {
		err := ValidHost(c.host)
		if (err == nil) != c.ok {
			t.Errorf("ValidHost(%q) = %v, want ok %v", c.host, err, c.ok)
		}
		if err != nil && c.host != "" && !strings.Contains(err.Error(), "host") {
			t.Errorf("error %q does not name the host", err)
		}
	}
}
