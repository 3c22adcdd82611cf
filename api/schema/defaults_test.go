package schema

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/executorobject/executortest"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// at is the value of a schema file at a JSON pointer (/$defs/spec/...).
func at(t *testing.T, file, pointer string) any {
	t.Helper()
	var v any = readSchema(t, file)
	for _, key := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s#%s: no object at %q", file, pointer, key)
		}
		if v, ok = m[key]; !ok {
			t.Fatalf("%s#%s: no %q", file, pointer, key)
		}
	}
	return v
}

// documented is one default or enum of a schema and what the parser does.
type documented struct {
	pointer string
	parser  any // a duration's default is compared as a time.Duration
}

func checkDocumented(t *testing.T, file string, rows []documented) {
	t.Helper()
	for _, r := range rows {
		got := at(t, file, r.pointer)
		if d, ok := r.parser.(time.Duration); ok {
			s, _ := got.(string)
			parsed, err := time.ParseDuration(s)
			if err != nil || parsed != d {
				t.Errorf("%s#%s = %v, the parser's is %s", file, r.pointer, got, d)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(r.parser) {
			t.Errorf("%s#%s = %v, the parser's is %v", file, r.pointer, got, r.parser)
		}
	}
}

// TestDefaults_Policy: the defaults the schema documents are those a
// snapshot fills in, and its enums are the parser's values.
func TestDefaults_Policy(t *testing.T) {
	p, issues := policy.Parse([]byte(policytest.Doc(`waves: [{name: a, percent: 100, by: zone}]
health:
  probes: [{url: "http://{host}/"}]
  metrics: [{name: q, provider: cloudwatch, cloudwatch: {namespace: N, metricName: M}, max: 1}]`)))
	if issues.HasErrors() {
		t.Fatal(issues)
	}
	s := p.Snapshot(policy.KindConfig)
	h, probe, metric := s.Health, s.Health.Probes[0], s.Health.Metrics[0]
	const spec, d = "/$defs/spec/properties/", "/$defs/"
	checkDocumented(t, RolloutPolicyFile, []documented{
		{spec + "maxConcurrent/default", s.MaxConcurrent},
		{spec + "healthWait/default", s.HealthWait},
		{spec + "offlineGracePeriod/default", s.OfflineGracePeriod},
		{spec + "failureThreshold/properties/maxFailed/default", s.FailureThreshold.MaxFailed},
		{spec + "onFailure/default", s.OnFailure},
		{spec + "onFailure/enum", []policy.OnFailure{policy.OnFailurePause, policy.OnFailureStop, policy.OnFailureRollback, policy.OnFailureRollbackWave, policy.OnFailureRollbackAll}},
		{spec + "timezoneAttribute/default", s.TimezoneAttribute},
		{spec + "topology/properties/regionAttribute/default", s.Topology.RegionAttribute},
		{spec + "topology/properties/zoneAttribute/default", s.Topology.ZoneAttribute},
		{spec + "topology/properties/hostAttribute/default", s.Topology.HostAttribute},
		{spec + "approvals/properties/required/default", s.Approvals.Required},
		{spec + "approvals/properties/expiry/default", s.Approvals.Expiry},
		{d + "wave/properties/parallelRegions/default", s.Waves[0].ParallelRegions},
		{d + "wave/properties/by/enum", []policy.Split{policy.SplitRegion, policy.SplitZone, policy.SplitAZ}},
		{d + "health/properties/interval/default", h.Interval},
		{d + "health/properties/failuresToStop/default", h.FailuresToStop},
		{d + "probe/properties/expectStatus/default", probe.ExpectStatus},
		{d + "probe/properties/timeout/default", probe.Timeout},
		{d + "metric/properties/provider/enum", []string{policy.ProviderPrometheus, policy.ProviderCloudWatch}},
		{d + "metric/properties/provider/default", policy.ProviderPrometheus},
		{d + "metric/properties/lookback/default", metric.Lookback},
		{d + "cloudwatchMetric/properties/stat/default", metric.CloudWatch.Stat},
		{d + "cloudwatchMetric/properties/period/default", metric.CloudWatch.Period},
	})
}

func TestDefaults_Fleet(t *testing.T) {
	f, issues := fleet.Parse([]byte("apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\n"))
	if issues.HasErrors() {
		t.Fatal(issues)
	}
	checkDocumented(t, FleetFile, []documented{
		{"/$defs/update/properties/executor/default", f.UpdateExecutor()},
		{"/$defs/update/properties/executor/enum", append(slices.Clone(fleet.Executors), "", "<nil>")}, // and "" and null: left out
		{"/properties/spec/properties/rollout/properties/configPolicy/default", f.ConfigPolicyName()},
		{"/properties/spec/properties/rollout/properties/versionPolicy/default", f.VersionPolicyName()},
		{"/$defs/selection/properties/enabled/default", f.Update.Selection.Enabled},
	})
}

func TestDefaults_Executor(t *testing.T) {
	hook, issues := executorobject.Parse([]byte(executortest.Doc(executortest.MinimalWebhook)))
	awx, more := executorobject.Parse([]byte(executortest.Doc(executortest.MinimalAWX)))
	if issues.HasErrors() || more.HasErrors() {
		t.Fatal(issues, more)
	}
	w, a := hook.Webhook, awx.AWX
	checkDocumented(t, ExecutorFile, []documented{
		{"/properties/spec/properties/type/enum", []string{executorobject.TypeWebhook, executorobject.TypeAWX}},
		{"/$defs/webhook/properties/method/default", w.Method},
		{"/$defs/webhook/properties/timeout/default", w.Timeout},
		{"/$defs/webhook/properties/retryFor/default", w.RetryFor},
		{"/$defs/webhook/properties/cancel/default", w.Cancel},
		{"/$defs/awx/properties/limit/default", a.Limit},
		{"/$defs/awx/properties/hostAttribute/default", a.HostAttribute},
		{"/$defs/awx/properties/timeout/default", a.Timeout},
		{"/$defs/awx/properties/retryFor/default", a.RetryFor},
	})
}

// TestHeaders: the schema refuses every header the executor reserves, in
// any case, as the parser does, and accepts one of the user's.
func TestHeaders(t *testing.T) {
	s := schemas(t)[ExecutorFile]
	var names []string
	for _, h := range append(slices.Clone(executorobject.ReservedHeaders), executorobject.ReservedHeaderPrefix+"Delivery") {
		names = append(names, h, strings.ToLower(h), strings.ToUpper(h))
	}
	for _, name := range append(names, "X-Team", "x-myriarch") {
		doc := executortest.Doc("type: webhook\nwebhook: {url: 'https://a.example', secretRef: s, headers: {'" + name + "': v}}")
		_, issues := executorobject.Parse([]byte(doc))
		parserOK, schemaOK := !issues.HasErrors(), verdict(s, []byte(doc)) == nil
		if parserOK != schemaOK || parserOK != (name == "X-Team" || name == "x-myriarch") {
			t.Errorf("header %q: parser accepts %v, schema accepts %v", name, parserOK, schemaOK)
		}
	}
}
