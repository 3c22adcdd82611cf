package policy

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/windows"
)

// validateGates checks health, approvalsBetween, approvals and freezes.
func validateGates(l *issue.List, s Spec) {
	if s.Health != nil {
		validateHealth(l, "spec.health", *s.Health)
	}
	for i, w := range s.Waves {
		path := fmt.Sprintf("spec.waves[%d].batchBake", i)
		switch {
		case w.BatchBake < 0:
			l.Errorf(CodeDurationInvalid, path, "batchBake must not be negative, got %s", w.BatchBake)
		case w.BatchBake > MaxBake:
			l.Errorf(CodeBakeInvalid, path, "batchBake %s exceeds 24h; a batch gate reads for at most 24h", w.BatchBake)
		}
	}
	names := map[string]bool{}
	for _, w := range s.Waves {
		names[w.Name] = true
	}
	for i, n := range s.ApprovalsBetween {
		if !names[n] {
			l.Errorf(CodeApprovalInvalid, fmt.Sprintf("spec.approvalsBetween[%d]", i), "approvalsBetween names the wave %s, which the policy does not have; name a wave of spec.waves", quote(n))
		}
	}
	if e := s.Approvals.Expiry; e < 0 || (e > 0 && e < time.Minute) {
		l.Errorf(CodeApprovalInvalid, "spec.approvals.expiry", "expiry must be at least 1m, got %s", e)
	}
	seen := map[string]int{}
	for i, f := range s.Freezes {
		validateFreeze(l, fmt.Sprintf("spec.freezes[%d]", i), f, i, seen)
	}
}

func validateHealth(l *issue.List, path string, h Health) {
	if h.Interval < 0 || (h.Interval > 0 && h.Interval < MinGateInterval) {
		l.Errorf(CodeGateInvalid, path+".interval", "interval must be at least 1s, got %s", h.Interval)
	}
	if h.IsZero() {
		l.Errorf(CodeGateInvalid, path, "health has no check; add probes, metrics or alerts, or remove health (a bake alone needs none)")
	}
	for i, p := range h.Probes {
		pp := fmt.Sprintf("%s.probes[%d]", path, i)
		if err := ProbeURLError(p.URL); err != nil {
			l.Errorf(CodeGateInvalid, pp+".url", "%s", err)
		}
		if p.ExpectStatus != 0 && (p.ExpectStatus < 100 || p.ExpectStatus > 599) {
			l.Errorf(CodeGateInvalid, pp+".expectStatus", "expectStatus must be an HTTP status from 100 to 599, got %d", p.ExpectStatus)
		}
		if p.Timeout < 0 {
			l.Errorf(CodeDurationInvalid, pp+".timeout", "timeout must not be negative, got %s", p.Timeout)
		}
	}
	names := map[string]int{}
	for i, m := range h.Metrics {
		validateMetric(l, fmt.Sprintf("%s.metrics[%d]", path, i), m, i, names)
	}
	if a := h.Alerts; a != nil {
		validateAlerts(l, path+".alerts", *a)
	}
	validatePlaceholders(l, path, h)
}

func validateMetric(l *issue.List, path string, m Metric, i int, names map[string]int) {
	if m.Name == "" {
		l.Errorf(CodeGateInvalid, path+".name", "the metric has no name; operators read gates by name, e.g. name: exporter-failures")
	} else if j, dup := names[m.Name]; dup {
		l.Errorf(CodeGateInvalid, path+".name", "metric name %s is already used by metrics[%d]; metric names must be unique", quote(m.Name), j)
	} else {
		names[m.Name] = i
	}
	switch m.Provider {
	case "", ProviderPrometheus:
		if strings.TrimSpace(m.Query) == "" {
			l.Errorf(CodeGateInvalid, path+".query", "a prometheus metric needs a query (PromQL)")
		}
		if m.CloudWatch != nil {
			l.Errorf(CodeGateInvalid, path+".cloudwatch", "cloudwatch names a CloudWatch metric, but the provider is prometheus; write provider: cloudwatch")
		}
	case ProviderCloudWatch:
		switch {
		case m.CloudWatch == nil && strings.TrimSpace(m.Query) == "":
			l.Errorf(CodeGateInvalid, path, "a cloudwatch metric needs a query (a metric-math expression) or cloudwatch (namespace, metricName)")
		case m.CloudWatch != nil && m.Query != "":
			l.Errorf(CodeGateInvalid, path, "a cloudwatch metric has a query or cloudwatch, not both")
		case m.CloudWatch != nil && (m.CloudWatch.Namespace == "" || m.CloudWatch.MetricName == ""):
			l.Errorf(CodeGateInvalid, path+".cloudwatch", "cloudwatch needs namespace and metricName")
		}
	default:
		l.Errorf(CodeGateInvalid, path+".provider", "unknown provider %s; use prometheus (the default) or cloudwatch", quote(m.Provider))
	}
	switch {
	case m.Max == nil && m.Min == nil:
		l.Errorf(CodeGateInvalid, path, "metric %s has neither max nor min; give the threshold that turns it red", quote(m.Name))
	case m.Max != nil && m.Min != nil && *m.Min > *m.Max:
		l.Errorf(CodeGateInvalid, path+".min", "min %g is above max %g; no value could be green", *m.Min, *m.Max)
	}
	if m.Lookback < 0 {
		l.Errorf(CodeDurationInvalid, path+".lookback", "lookback must not be negative, got %s", m.Lookback)
	}
}

func validateAlerts(l *issue.List, path string, a Alerts) {
	if len(a.BlockOn) == 0 && a.CloudWatchAlarms == nil {
		l.Errorf(CodeGateInvalid, path, `alerts needs blockOn (Alertmanager conditions such as "severity=critical") or cloudwatchAlarms`)
	}
	for i, c := range a.BlockOn {
		if err := MatcherError(c); err != nil {
			l.Errorf(CodeGateInvalid, fmt.Sprintf("%s.blockOn[%d]", path, i), "%s", err)
		}
	}
	if cw := a.CloudWatchAlarms; cw != nil && len(cw.Names) == 0 && cw.Prefix == "" {
		l.Errorf(CodeGateInvalid, path+".cloudwatchAlarms", "cloudwatchAlarms needs names or a prefix")
	}
}

func validateFreeze(l *issue.List, path string, f Freeze, i int, seen map[string]int) {
	if f.Name == "" {
		l.Errorf(CodeFreezeInvalid, path+".name", "the freeze has no name; the rollout names the freeze that holds it")
	} else if j, dup := seen[f.Name]; dup {
		l.Errorf(CodeFreezeInvalid, path+".name", "freeze name %s is already used by spec.freezes[%d]", quote(f.Name), j)
	} else {
		seen[f.Name] = i
	}
	for j, r := range f.Regions {
		if strings.TrimSpace(r) == "" {
			l.Errorf(CodeFreezeInvalid, fmt.Sprintf("%s.regions[%d]", path, j), "region is empty; write the region as agents report it")
		}
	}
	absolute := f.From != nil || f.Until != nil
	switch {
	case absolute && f.Window != nil:
		l.Errorf(CodeFreezeInvalid, path, "a freeze is either from/until or a daily window (days, start, end), not both")
	case absolute && (f.From == nil || f.Until == nil):
		l.Errorf(CodeFreezeInvalid, path, "an absolute freeze needs both from and until")
	case absolute && !f.Until.After(*f.From):
		l.Errorf(CodeFreezeInvalid, path+".until", "until %s is not after from %s", f.Until.Format(time.RFC3339), f.From.Format(time.RFC3339))
	case !absolute && f.Window == nil:
		l.Errorf(CodeFreezeInvalid, path, `the freeze has no period; give from and until, or start and end of a daily window`)
	case f.Window != nil:
		if f.Window.Timezone == windows.AgentZone {
			l.Errorf(CodeTimezoneInvalid, path+".timezone", `a freeze holds whole regions, so its zone cannot be agent; write an IANA zone such as "UTC" (the default)`)
		} else {
			validateWindow(l, path, *f.Window)
		}
	}
}

// ProbeURLError checks a probe URL template: it must start with
// http://{host} or https://{host}, followed by :port, /path, ?query or
// nothing, so that a probe reaches only the targets
// (http://{host}.example.com or http://{host}@example.com would go elsewhere).
func ProbeURLError(tmpl string) error {
	const hint = "e.g. http://{host}:13133/"
	rest, ok := strings.CutPrefix(tmpl, "http://{host}")
	if !ok {
		rest, ok = strings.CutPrefix(tmpl, "https://{host}")
	}
	if !ok {
		return fmt.Errorf("probe url %s must start with http://{host} or https://{host}, %s", quote(tmpl), hint)
	}
	if rest != "" && !strings.ContainsAny(rest[:1], ":/?") {
		return fmt.Errorf("probe url %s: {host} must be followed by :port, /path, ?query or nothing, %s", quote(tmpl), hint)
	}
	const sample = "target.invalid"
	sub := strings.NewReplacer("{host}", sample, "{fleet}", "f", "{region}", "r", "{zone}", "z", "{wave}", "w", "{stage}", "s").Replace(tmpl)
	u, err := url.Parse(sub)
	if err != nil {
		return fmt.Errorf("probe url %s is not a URL: %v", quote(tmpl), err)
	}
	if u.Hostname() != sample {
		return fmt.Errorf("probe url %s: the host must be {host}, %s", quote(tmpl), hint)
	}
	return nil
}

// MatcherError is ParseMatcher's error alone.
func MatcherError(s string) error {
	_, err := ParseMatcher(s)
	return err
}
