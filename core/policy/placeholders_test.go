package policy_test

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// A {name} that a gate's template does not substitute is refused with
// placeholder_unknown, naming it and the placeholders of that field; PromQL's
// and CloudWatch's own braces are no placeholders.
func TestParse_Placeholders(t *testing.T) {
	const (
		stageList = "the placeholders are {fleet}, {region}, {zone}, {wave}, {stage}"
		probeList = "the placeholders are {host}, {fleet}, {wave}, {stage}"
	)
	metric := func(query string) string {
		return "health: {metrics: [{name: error-rate, query: '" + query + "', max: 0.01}]}"
	}
	probe := func(url string) string { return "health: {probes: [{url: '" + url + "'}]}" }
	cloudwatch := func(fields string) string {
		return "health: {metrics: [{name: cpu, provider: cloudwatch, " + fields + ", max: 80}]}"
	}
	for _, c := range []struct {
		spec string
		path string // "": valid
		msg  string
	}{
		// unknown names and typos, in every templated field
		{spec: metric(`rate(x{az="{az}"}[5m])`), path: "spec.health.metrics[0].query",
			msg: "metric error-rate: unknown placeholder {az}; " + stageList},
		{spec: metric(`rate(x{region="{regoin}"}[5m])`), path: "spec.health.metrics[0].query", msg: "unknown placeholder {regoin}"},
		{spec: metric(`rate(x{fleet="{Fleet}"}[5m])`), path: "spec.health.metrics[0].query", msg: "unknown placeholder {Fleet}"}, // names are case-sensitive
		{spec: metric(`x{a="{host}"}`), path: "spec.health.metrics[0].query",
			msg: "unknown placeholder {host}; " + stageList + " ({host} has a value in probe URLs only, which are read once per target)"},
		{spec: probe("http://{host}:13133/{zone}"), path: "spec.health.probes[0].url",
			msg: `probe url "http://{host}:13133/{zone}": unknown placeholder {zone}; ` + probeList + " ({zone} has a value in metrics and alarm names only"},
		{spec: probe("http://{host}:13133/?f={flet}"), path: "spec.health.probes[0].url", msg: "unknown placeholder {flet}; " + probeList},
		{spec: cloudwatch(`query: 'SEARCH(''{MyApp} MetricName="Errors"'', ''Sum'')'`), path: "spec.health.metrics[0].query",
			msg: `unknown placeholder {MyApp}; ` + stageList + `; a SEARCH schema of a namespace alone is written with quotes: {"MyApp"}`},
		{spec: cloudwatch("cloudwatch: {namespace: N, metricName: M, dimensions: {AZ: '{az}'}}"), path: "spec.health.metrics[0].cloudwatch.dimensions.AZ",
			msg: "metric cpu, dimension AZ: unknown placeholder {az}; " + stageList},
		{spec: "health: {alerts: {cloudwatchAlarms: {names: ['ok-{region}', 'errors-{az}']}}}", path: "spec.health.alerts.cloudwatchAlarms.names[1]",
			msg: `alarm name "errors-{az}": unknown placeholder {az}`},
		{spec: "health: {alerts: {cloudwatchAlarms: {prefix: '{host}-'}}}", path: "spec.health.alerts.cloudwatchAlarms.prefix",
			msg: `alarm prefix "{host}-": unknown placeholder {host}`},

		// PromQL's and CloudWatch's own braces
		{spec: metric(`sum(rate(otelcol_exporter_send_failed_spans_total{fleet="{fleet}",zone=~"{zone}"}[1m]))`)},
		{spec: metric(`count({__name__=~"otelcol_.*",job="x"})`)},
		{spec: metric(`x{job="a"} or vector(0)`)},
		{spec: metric(`x{}`)},
		{spec: metric(`x{ fleet }`)}, // no placeholder: PromQL's error, reported by Prometheus
		{spec: cloudwatch(`query: 'SEARCH(''{AWS/EC2,InstanceId} MetricName="CPUUtilization"'', ''Average'')'`)},
		{spec: cloudwatch(`query: 'SEARCH(''{"MyApp"} MetricName="Errors" :aws.AccountId = {{444455556666}}'', ''Sum'')'`)},

		// every known placeholder, where it has a value
		{spec: metric(`x{f="{fleet}",r=~"{region}",z=~"{zone}",w="{wave}",s="{stage}"}`)},
		{spec: probe("http://{host}:13133/{fleet}/{wave}/{stage}")},
		{spec: cloudwatch("cloudwatch: {namespace: N, metricName: M, dimensions: {F: '{fleet}', R: '{region}', Z: '{zone}', W: '{wave}', S: '{stage}'}}")},
		{spec: "health: {alerts: {cloudwatchAlarms: {names: ['{fleet}-{region}-{zone}-{wave}-{stage}'], prefix: '{fleet}-'}}}"},
	} {
		_, issues := policy.Parse([]byte(policytest.Doc(c.spec)))
		if c.path == "" {
			if len(issues) != 0 {
				t.Errorf("%s: want no issue, got %v", c.spec, issues)
			}
			continue
		}
		if len(issues) != 1 {
			t.Errorf("%s: want one issue, got %v", c.spec, issues)
			continue
		}
		got := issues[0]
		if got.Code != policy.CodePlaceholderUnknown || got.Path != c.path || got.Severity != issue.Error || !strings.Contains(got.Message, c.msg) {
			t.Errorf("%s:\n got %v\nwant error %s at %s: ...%s...", c.spec, got, policy.CodePlaceholderUnknown, c.path, c.msg)
		}
	}
}

// A placeholder repeated in a template is reported once; two unknown ones
// are reported each.
func TestParse_PlaceholdersOncePerName(t *testing.T) {
	_, issues := policy.Parse([]byte(policytest.Doc(`health: {metrics: [{name: m, query: 'a{x="{az}"} / b{x="{az}"} + c{y="{dc}"}', max: 1}]}`)))
	var names []string
	for _, is := range issues.WithCode(policy.CodePlaceholderUnknown) {
		names = append(names, strings.Fields(is.Message)[4])
	}
	if len(issues) != 2 || strings.Join(names, " ") != "{az}; {dc};" {
		t.Errorf("want {az} and {dc} once each, got %v", issues)
	}
}
