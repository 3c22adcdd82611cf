package gate

import (
	"slices"
	"testing"
)

func TestMatcherMatches(t *testing.T) {
	labels := map[string]string{"severity": "critical", "region": "eu-west-1"}
	for _, c := range []struct {
		matcher string
		want    bool
	}{
		{matcher: "severity=critical", want: true},
		{matcher: "severity=warning", want: false},
		{matcher: "severity!=warning", want: true},
		{matcher: "severity!=critical", want: false},
		{matcher: "region=~eu-.*", want: true},
		{matcher: "region=~eu", want: false},     // anchored at the end
		{matcher: "region=~west-1", want: false}, // anchored at the start
		{matcher: "region!~us-.*", want: true},
		{matcher: "region!~eu-.*", want: false},
		{matcher: "team=ops", want: false},           // missing label is ""
		{matcher: "team!=ops", want: true},           // so != matches it
		{matcher: "team=", want: true},               // and = "" matches it
		{matcher: "team=~.*", want: true},            // as does a regex matching ""
		{matcher: "team!~.+", want: true},            // and one that needs a value, negated
		{matcher: "region=~a|eu-west-1", want: true}, // alternation stays inside the anchors
	} {
		m, err := ParseMatcher(c.matcher)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Matches(labels); got != c.want {
			t.Errorf("%s on %v = %v, want %v", c.matcher, labels, got, c.want)
		}
	}
}

func TestConcernsStage(t *testing.T) {
	critical := mustMatchers(t, "severity=critical")
	eu := []string{"eu-west-1"}
	for _, c := range []struct {
		name    string
		labels  map[string]string
		blockOn []Matcher
		fleet   string
		regions []string
		zones   []string
		want    bool
	}{
		{name: "region of the stage", labels: map[string]string{"region": "eu-west-1"}, regions: eu, want: true},
		{name: "other region", labels: map[string]string{"region": "us-east-1"}, regions: eu, want: false},
		{name: "one of the stage's regions", labels: map[string]string{"region": "us-east-1"}, regions: []string{"eu-west-1", "us-east-1"}, want: true},
		{name: "no region label: every region", labels: map[string]string{"alertname": "X"}, regions: eu, want: true},
		{name: "stage of any region", labels: map[string]string{"region": "us-east-1"}, regions: nil, want: true},
		{name: "other fleet", labels: map[string]string{"fleet": "core"}, fleet: "edge", want: false},
		{name: "same fleet", labels: map[string]string{"fleet": "edge"}, fleet: "edge", want: true},
		{name: "no fleet label", labels: map[string]string{}, fleet: "edge", want: true},
		{name: "zone of the stage", labels: map[string]string{"zone": "eu-west-1a"}, zones: []string{"eu-west-1a"}, want: true},
		{name: "other zone", labels: map[string]string{"zone": "eu-west-1b"}, zones: []string{"eu-west-1a"}, want: false},
		{name: "right region, other zone", labels: map[string]string{"region": "eu-west-1", "zone": "eu-west-1b"}, regions: eu, zones: []string{"eu-west-1a"}, want: false},
		{name: "blockOn matches", labels: map[string]string{"severity": "critical"}, blockOn: critical, want: true},
		{name: "blockOn does not match", labels: map[string]string{"severity": "warning"}, blockOn: critical, want: false},
		{name: "every blockOn must match", labels: map[string]string{"severity": "critical"}, blockOn: mustMatchers(t, "severity=critical", "team=ops"), want: false},
		{name: "blockOn and other region", labels: map[string]string{"severity": "critical", "region": "us-east-1"}, blockOn: critical, regions: eu, want: false},
		{name: "cloud_region is not read", labels: map[string]string{"cloud_region": "us-east-1"}, regions: eu, want: true},
	} {
		if got := ConcernsStage(c.labels, c.blockOn, c.fleet, c.regions, c.zones); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func mustMatchers(t *testing.T, list ...string) []Matcher {
	t.Helper()
	ms, err := ParseMatchers(list)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestStageScope(t *testing.T) {
	regions, zones := StageScope([]Pass{
		{Name: "eu-west-1/eu-west-1b", Region: "eu-west-1", Zone: "eu-west-1b"},
		{Name: "rest", Region: "us-east-1|eu-west-1", Zone: "us-east-1a|eu-west-1a"},
		{Name: "no zone", Region: "ap-south-1"},
	})
	if want := []string{"ap-south-1", "eu-west-1", "us-east-1"}; !slices.Equal(regions, want) {
		t.Errorf("regions %q, want %q", regions, want)
	}
	if want := []string{"eu-west-1a", "eu-west-1b", "us-east-1a"}; !slices.Equal(zones, want) {
		t.Errorf("zones %q, want %q", zones, want)
	}
}
