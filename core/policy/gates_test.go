package policy

import (
	"os"
	"testing"
	"time"
)

func TestParse_GatesExample(t *testing.T) {
	data, err := os.ReadFile("testdata/gates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, issues := Parse(data)
	if len(issues) != 0 {
		t.Fatalf("issues: %v", issues)
	}
	s := p.Snapshot(KindConfig)
	h := s.Health
	switch {
	case h == nil || h.Interval != 30*time.Second || h.FailuresToStop != 2:
		t.Fatalf("health %+v", h)
	case h.Probes[0].ExpectStatus != 200 || h.Probes[0].Timeout != DefaultProbeTimeout:
		t.Fatalf("probe defaults %+v", h.Probes[0])
	case h.Metrics[0].Provider != ProviderPrometheus || *h.Metrics[0].Max != 0.01 || !h.Metrics[1].DryRun:
		t.Fatalf("metrics %+v", h.Metrics)
	case h.Metrics[2].CloudWatch.Period != time.Minute || h.Metrics[2].Lookback != DefaultMetricLookback:
		t.Fatalf("cloudwatch defaults %+v", h.Metrics[2])
	case s.Approvals != (Approvals{Required: 2, Expiry: 24 * time.Hour}):
		t.Fatalf("approvals %+v", s.Approvals)
	case !s.Waves[1].RequireApproval || s.Waves[0].RequireApproval:
		t.Fatalf("approvalsBetween [canary] must make the wave after canary wait: %+v", s.Waves)
	case !s.Waves[1].BatchGate || s.Waves[1].BatchBake != time.Minute:
		t.Fatalf("batchBake %+v", s.Waves[1])
	case len(s.Freezes) != 2 || s.Freezes[0].Until.Year() != 2027 || s.Freezes[1].Window == nil || s.Freezes[1].Window.Start != 60:
		t.Fatalf("freezes %+v", s.Freezes)
	}
}

func TestSnapshot_GateDefaults(t *testing.T) {
	zero := 0.0
	p := Policy{Name: "p", Spec: Spec{
		Waves:  []Wave{{Name: "canary", Percent: 10}},
		Health: &Health{Metrics: []Metric{{Name: "m", Query: "up", Min: &zero}}},
	}}
	s := p.Snapshot(KindConfig)
	if s.Health.Interval != DefaultGateInterval || s.Health.FailuresToStop != DefaultFailuresToStop || s.Health.Metrics[0].Provider != ProviderPrometheus {
		t.Fatalf("health %+v", s.Health)
	}
	if s.Approvals != (Approvals{Required: 1, Expiry: 72 * time.Hour}) {
		t.Fatalf("approvals %+v: one approver and 72h by default", s.Approvals)
	}
	if !s.Staged() || s.Topology.HostAttribute != DefaultHostAttribute {
		t.Fatalf("a policy with health runs in stages and knows its attributes: %+v", s.Topology)
	}
	if (Policy{Name: "p"}).Snapshot(KindConfig).Staged() {
		t.Fatal("a policy without gates, bakes or by runs waves whole")
	}
	last := Policy{Name: "p", Spec: Spec{Waves: []Wave{{Name: "canary", Percent: 10}}, ApprovalsBetween: []string{"canary"}}}.Snapshot(KindConfig)
	if !last.ApprovalAfterLast() {
		t.Fatal("approvalsBetween naming the last wave makes the implicit rest wave wait")
	}
}

func TestParseMatcher(t *testing.T) {
	for _, c := range []struct {
		in    string
		label string
		op    MatchOp
		value string
		bad   bool
	}{
		{in: "severity=critical", label: "severity", op: MatchEqual, value: "critical"},
		{in: "severity!=info", label: "severity", op: MatchNotEqual, value: "info"},
		{in: "region=~eu-.*", label: "region", op: MatchRegexp, value: "eu-.*"},
		{in: "team!~ops|sre", label: "team", op: MatchNotRegexp, value: "ops|sre"},
		{in: ` severity = "critical" `, label: "severity", op: MatchEqual, value: "critical"}, // spaces, quotes
		{in: "k==v", label: "k", op: MatchEqual, value: "=v"},                                 // the value holds the rest
		{in: "k=", label: "k", op: MatchEqual, value: ""},                                     // label absent or empty
		{in: "severity", bad: true},
		{in: "=critical", bad: true},
		{in: "a b=c", bad: true},
		{in: "k=~(", bad: true},            // bad regex
		{in: `k="unterminated`, bad: true}, // bad quoting
		{in: "k!critical", bad: true},      // no operator after !
	} {
		m, err := ParseMatcher(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseMatcher(%q) = %v, want an error", c.in, m)
			}
			continue
		}
		if err != nil || m.Label != c.label || m.Op != c.op || m.Value != c.value {
			t.Errorf("ParseMatcher(%q) = %+v, %v; want %s %s %q", c.in, m, err, c.label, c.op, c.value)
		}
	}
}

func TestProbeURLError(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		ok   bool
	}{
		{tmpl: "http://{host}", ok: true},
		{tmpl: "https://{host}", ok: true},
		{tmpl: "http://{host}:13133/", ok: true},
		{tmpl: "http://{host}/health/{fleet}", ok: true},
		{tmpl: "https://{host}?stage={stage}", ok: true},
		{tmpl: "http://{host}.evil.com/", ok: false},       // another host
		{tmpl: "http://{host}@evil.com/", ok: false},       // {host} as user info
		{tmpl: "http://user@{host}/", ok: false},           // does not start with the host
		{tmpl: "http://{host}#frag", ok: false},            // only :, / or ? may follow
		{tmpl: "http://{host}:port/", ok: false},           // not a port
		{tmpl: "ftp://{host}/", ok: false},                 // scheme
		{tmpl: "http://10.0.0.1/{host}", ok: false},        // {host} not the host
		{tmpl: "HTTP://{host}/", ok: false},                // as written in the policy: lower case
		{tmpl: "http://{hostname}/", ok: false},            // not the placeholder
		{tmpl: " http://{host}/", ok: false},               // leading space
		{tmpl: "http://{host}:13133/%zz", ok: false},       // not a URL
		{tmpl: "http://{host}:1/?next=http://x", ok: true}, // what follows the host is the target's business
	} {
		err := ProbeURLError(c.tmpl)
		if (err == nil) != c.ok {
			t.Errorf("ProbeURLError(%q) = %v, want ok %v", c.tmpl, err, c.ok)
		}
	}
}
