package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
)

// valid is a policy built in code that passes Validate; each row breaks one rule.
func valid() Policy {
	return Policy{Name: "p", Spec: Spec{
		Waves: []Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "half", Percent: 50},
			{Name: "rest", Percent: 100},
		},
		DefaultTimezone:    "Europe/Berlin",
		MaintenanceWindows: []windows.Window{{Days: []time.Weekday{time.Monday}, Start: 22 * 60, End: 5 * 60, Timezone: "agent"}},
	}}
}

func TestValidate_Valid(t *testing.T) {
	for name, p := range map[string]Policy{
		"valid":    valid(),
		"minimal":  {Name: "p"},                                                       // no spec at all: every default
		"builtIn":  {Name: DefaultName, Spec: Spec{Waves: BuiltIn(KindConfig).Waves}}, // the built-in waves
		"topology": topo(),
	} {
		if issues := Validate(p); len(issues) != 0 {
			t.Errorf("%s: %v", name, issues)
		}
	}
}

// topo is a valid multi-region policy: a canary, then one region by zone,
// then the others two at a time.
func topo() Policy {
	canary, _ := selector.ParseConditions("canary=true")
	eu1, _ := selector.ParseConditions("cloud.region=eu-1, canary!=true")
	return Policy{Name: "regions", Spec: Spec{
		Waves: []Wave{
			{Name: "canary", Selector: &selector.Selector{MatchConditions: canary}, Bake: 15 * time.Minute, MaxUnavailable: Amount{Value: 1}},
			{Name: "eu-1", Selector: &selector.Selector{MatchConditions: eu1}, By: SplitAZ, Bake: 10 * time.Minute},
			{Name: "rest", Percent: 100, By: SplitZone, ParallelRegions: 2, Bake: 24 * time.Hour},
		},
		Regions:        []string{"eu-1", "eu-2", "us-1"},
		MaxUnavailable: Amount{Value: 25, Percent: true},
		OnFailure:      OnFailureRollbackWave,
		Topology:       Topology{RegionAttribute: "site.region"},
	}}
}

// TestValidate_Topology: each row breaks one topology rule of topo().
func TestValidate_Topology(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *Policy)
		code   string
		path   string
		msg    string
	}{
		{name: "by unknown", change: func(p *Policy) { p.Spec.Waves[1].By = "rack" }, code: CodeTopologyInvalid, path: "spec.waves[1].by", msg: `wave "eu-1" has by "rack"`},
		{name: "by case", change: func(p *Policy) { p.Spec.Waves[1].By = "Region" }, code: CodeTopologyInvalid, path: "spec.waves[1].by", msg: `did you mean "region"?`},
		{name: "parallelRegions negative", change: func(p *Policy) { p.Spec.Waves[2].ParallelRegions = -1 }, code: CodeTopologyInvalid, path: "spec.waves[2].parallelRegions", msg: "1 or more, got -1"},
		{name: "parallelRegions without by", change: func(p *Policy) { p.Spec.Waves[0].ParallelRegions = 2 }, code: CodeTopologyInvalid, path: "spec.waves[0].parallelRegions", msg: `wave "canary" has parallelRegions but no by`},
		{name: "bake 25h", change: func(p *Policy) { p.Spec.Waves[1].Bake = 25 * time.Hour }, code: CodeBakeInvalid, path: "spec.waves[1].bake", msg: `bake 25h0m0s of wave "eu-1" exceeds 24h`},
		{name: "bake 24h and 1s", change: func(p *Policy) { p.Spec.Waves[2].Bake = 24*time.Hour + time.Second }, code: CodeBakeInvalid, path: "spec.waves[2].bake", msg: "exceeds 24h"},
		{name: "bake negative", change: func(p *Policy) { p.Spec.Waves[0].Bake = -time.Second }, code: CodeDurationInvalid, path: "spec.waves[0].bake", msg: "got -1s"},
		{name: "wave maxUnavailable 0%", change: func(p *Policy) { p.Spec.Waves[1].MaxUnavailable = Amount{Value: 0, Percent: true} }, code: CodeMaxUnavailableInvalid, path: "spec.waves[1].maxUnavailable", msg: "from 1% to 100%, got 0%"},
		{name: "wave maxUnavailable 101%", change: func(p *Policy) { p.Spec.Waves[1].MaxUnavailable = Amount{Value: 101, Percent: true} }, code: CodeMaxUnavailableInvalid, path: "spec.waves[1].maxUnavailable", msg: "got 101%"},
		{name: "wave maxUnavailable negative", change: func(p *Policy) { p.Spec.Waves[0].MaxUnavailable = Amount{Value: -1} }, code: CodeMaxUnavailableInvalid, path: "spec.waves[0].maxUnavailable", msg: "at least 1, got -1"},
		{name: "rollout maxUnavailable negative", change: func(p *Policy) { p.Spec.MaxUnavailable = Amount{Value: -3} }, code: CodeMaxUnavailableInvalid, path: "spec.maxUnavailable", msg: "at least 1, got -3"},
		{name: "region twice", change: func(p *Policy) { p.Spec.Regions = append(p.Spec.Regions, "eu-2") }, code: CodeTopologyInvalid, path: "spec.regions[3]", msg: `region "eu-2" is already listed at spec.regions[1]`},
		{name: "region empty", change: func(p *Policy) { p.Spec.Regions[1] = "" }, code: CodeTopologyInvalid, path: "spec.regions[1]", msg: "is empty"},
		{name: "region with spaces", change: func(p *Policy) { p.Spec.Regions[1] = " eu-2" }, code: CodeTopologyInvalid, path: "spec.regions[1]", msg: "spaces at its ends"},
		{name: "regions without by", change: func(p *Policy) {
			p.Spec.Waves[1].By, p.Spec.Waves[2].By, p.Spec.Waves[2].ParallelRegions = "", "", 0
			p.Spec.Topology = Topology{}
		}, code: CodeTopologyInvalid, path: "spec.regions", msg: "no wave has by"},
		{name: "topology without by", change: func(p *Policy) {
			p.Spec.Waves[1].By, p.Spec.Waves[2].By, p.Spec.Waves[2].ParallelRegions = "", "", 0
			p.Spec.Regions = nil
		}, code: CodeTopologyInvalid, path: "spec.topology", msg: "no wave has by"},
		{name: "same attributes", change: func(p *Policy) { p.Spec.Topology.ZoneAttribute = "site.region" }, code: CodeTopologyInvalid, path: "spec.topology.zoneAttribute", msg: `both read from the attribute "site.region"`},
		{name: "region read from the default zone attribute", change: func(p *Policy) { p.Spec.Topology.RegionAttribute = DefaultZoneAttribute }, code: CodeTopologyInvalid, path: "spec.topology.regionAttribute", msg: "name two different attributes"},
		{name: "conditions built invalid", change: func(p *Policy) { p.Spec.Waves[0].Selector.MatchConditions[0].Op = "~" }, code: CodeSelectorInvalid, path: "spec.waves[0].selector.matchConditions", msg: `unknown operator "~"`},
		{name: "onFailure case", change: func(p *Policy) { p.Spec.OnFailure = "Stop" }, code: CodeValueInvalid, path: "spec.onFailure", msg: `did you mean "stop"?`},
	}
	for _, tt := range tests {
		p := topo()
		tt.change(&p)
		issues := Validate(p)
		if len(issues) != 1 {
			t.Errorf("%s: want one issue, got %v", tt.name, issues)
			continue
		}
		if got := issues[0]; got.Code != tt.code || got.Path != tt.path || !strings.Contains(got.Message, tt.msg) {
			t.Errorf("%s:\n got %v\nwant %s at %s: ...%s...", tt.name, got, tt.code, tt.path, tt.msg)
		}
	}
}

func TestValidate(t *testing.T) {
	neg := -1
	tests := []struct {
		name   string
		change func(p *Policy)
		code   string
		path   string
		msg    string
	}{
		{name: "no name", change: func(p *Policy) { p.Name = "" }, code: CodeNameRequired, path: "metadata.name", msg: "metadata.name is required"},
		{name: "neither", change: func(p *Policy) { p.Spec.Waves[1].Percent = 0 }, code: CodeWaveInvalid, path: "spec.waves[1]", msg: `wave "half" has neither`},
		{name: "both", change: func(p *Policy) { p.Spec.Waves[1].Selector = &selector.Selector{} }, code: CodeWaveInvalid, path: "spec.waves[1]", msg: "both a selector and a percent"},
		{name: "percent 101", change: func(p *Policy) { p.Spec.Waves[1].Percent = 101 }, code: CodeWaveInvalid, path: "spec.waves[1].percent", msg: "got 101"},
		{name: "percent down", change: func(p *Policy) { p.Spec.Waves[2].Percent = 40; p.Spec.Waves[2].Name = "last" }, code: CodeWaveInvalid, path: "spec.waves[2].percent", msg: `wave "last" has percent 40, which is not more than the 50 of wave "half"`},
		{name: "empty attribute", change: func(p *Policy) { p.Spec.Waves[0].Selector.MatchAttributes[""] = "x" }, code: CodeWaveInvalid, path: `spec.waves[0].selector.matchAttributes[""]`, msg: "empty"},
		{name: "unnamed", change: func(p *Policy) { p.Spec.Waves[1].Name = "" }, code: CodeWaveNameInvalid, path: "spec.waves[1].name", msg: "the wave at spec.waves[1] has no name"},
		{name: "duplicate", change: func(p *Policy) { p.Spec.Waves[1].Name = "canary" }, code: CodeWaveNameInvalid, path: "spec.waves[1].name", msg: `"canary" is already used by spec.waves[0]`},
		{name: "rest early", change: func(p *Policy) { p.Spec.Waves[1].Name = "rest"; p.Spec.Waves[2].Name = "all" }, code: CodeWaveNameInvalid, path: "spec.waves[1].name", msg: "reserved for the last wave"},
		{name: "rest below 100", change: func(p *Policy) { p.Spec.Waves[2].Percent = 90 }, code: CodeWaveNameInvalid, path: "spec.waves[2].name", msg: "must have percent: 100"},
		{name: "maxConcurrent", change: func(p *Policy) { p.Spec.MaxConcurrent = &neg }, code: CodeValueInvalid, path: "spec.maxConcurrent", msg: "got -1"},
		{name: "maxFailed", change: func(p *Policy) { p.Spec.FailureThreshold.MaxFailed = -2 }, code: CodeValueInvalid, path: "spec.failureThreshold.maxFailed", msg: "got -2"},
		{name: "maxFailedPercent", change: func(p *Policy) { p.Spec.FailureThreshold.MaxFailedPercent = 150 }, code: CodeValueInvalid, path: "spec.failureThreshold.maxFailedPercent", msg: "got 150"},
		{name: "onFailure", change: func(p *Policy) { p.Spec.OnFailure = "retry" }, code: CodeValueInvalid, path: "spec.onFailure", msg: `"retry" is not supported`},
		{name: "healthWait", change: func(p *Policy) { p.Spec.HealthWait = -time.Second }, code: CodeDurationInvalid, path: "spec.healthWait", msg: "healthWait must not be negative, got -1s"},
		{name: "applyTimeout", change: func(p *Policy) { p.Spec.ApplyTimeout = -time.Minute }, code: CodeDurationInvalid, path: "spec.applyTimeout", msg: "got -1m0s"},
		{name: "offlineGracePeriod", change: func(p *Policy) { p.Spec.OfflineGracePeriod = -time.Hour }, code: CodeDurationInvalid, path: "spec.offlineGracePeriod", msg: "got -1h0m0s"},
		{name: "defaultTimezone Local", change: func(p *Policy) { p.Spec.DefaultTimezone = "Local" }, code: CodeTimezoneInvalid, path: "spec.defaultTimezone", msg: "Local is never accepted"},
		{name: "defaultTimezone agent", change: func(p *Policy) { p.Spec.DefaultTimezone = "agent" }, code: CodeTimezoneInvalid, path: "spec.defaultTimezone", msg: "cannot be agent"},
		{name: "window zone", change: func(p *Policy) { p.Spec.MaintenanceWindows[0].Timezone = "Nowhere/City" }, code: CodeTimezoneInvalid, path: "spec.maintenanceWindows[0].timezone", msg: `"Nowhere/City"`},
		{name: "window day", change: func(p *Policy) { p.Spec.MaintenanceWindows[0].Days = []time.Weekday{1, 7} }, code: CodeWindowInvalid, path: "spec.maintenanceWindows[0].days[1]", msg: "weekday 7 is out of range"},
		{name: "window start", change: func(p *Policy) { p.Spec.MaintenanceWindows[0].Start = 1440 }, code: CodeWindowInvalid, path: "spec.maintenanceWindows[0].start", msg: "got 1440 minutes"},
		{name: "window end", change: func(p *Policy) { p.Spec.MaintenanceWindows[0].End = -1 }, code: CodeWindowInvalid, path: "spec.maintenanceWindows[0].end", msg: "got -1 minutes"},
	}
	for _, tt := range tests {
		p := valid()
		tt.change(&p)
		issues := Validate(p)
		if len(issues) != 1 {
			t.Errorf("%s: want one issue, got %v", tt.name, issues)
			continue
		}
		if got := issues[0]; got.Code != tt.code || got.Path != tt.path || !strings.Contains(got.Message, tt.msg) {
			t.Errorf("%s:\n got %v\nwant %s at %s: ...%s...", tt.name, got, tt.code, tt.path, tt.msg)
		}
	}
}

// A later percent is compared with the highest valid one before it, so one
// step down is reported once, not again for every wave after it.
func TestValidate_PercentsReportedOnce(t *testing.T) {
	p := Policy{Name: "p", Spec: Spec{Waves: []Wave{{Name: "a", Percent: 50}, {Name: "b", Percent: 10}, {Name: "c", Percent: 60}}}}
	issues := Validate(p)
	if len(issues) != 1 || issues[0].Path != "spec.waves[1].percent" {
		t.Errorf("issues = %v, want one at spec.waves[1].percent", issues)
	}
}
