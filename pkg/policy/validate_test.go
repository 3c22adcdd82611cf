package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/windows"
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
		"valid":   valid(),
		"minimal": {Name: "p"},                                                       // no spec at all: every default
		"builtIn": {Name: DefaultName, Spec: Spec{Waves: BuiltIn(KindConfig).Waves}}, // the built-in waves
	} {
		if issues := Validate(p); len(issues) != 0 {
			t.Errorf("%s: %v", name, issues)
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
		{"no name", func(p *Policy) { p.Name = "" }, CodeNameRequired, "metadata.name", "metadata.name is required"},
		{"neither", func(p *Policy) { p.Spec.Waves[1].Percent = 0 }, CodeWaveInvalid, "spec.waves[1]", `wave "half" has neither`},
		{"both", func(p *Policy) { p.Spec.Waves[1].Selector = &selector.Selector{} }, CodeWaveInvalid, "spec.waves[1]", "both a selector and a percent"},
		{"percent 101", func(p *Policy) { p.Spec.Waves[1].Percent = 101 }, CodeWaveInvalid, "spec.waves[1].percent", "got 101"},
		{"percent down", func(p *Policy) { p.Spec.Waves[2].Percent = 40; p.Spec.Waves[2].Name = "last" }, CodeWaveInvalid, "spec.waves[2].percent", `wave "last" has percent 40, which is not more than the 50 of wave "half"`},
		{"empty attribute", func(p *Policy) { p.Spec.Waves[0].Selector.MatchAttributes[""] = "x" }, CodeWaveInvalid, `spec.waves[0].selector.matchAttributes[""]`, "empty"},
		{"unnamed", func(p *Policy) { p.Spec.Waves[1].Name = "" }, CodeWaveNameInvalid, "spec.waves[1].name", "the wave at spec.waves[1] has no name"},
		{"duplicate", func(p *Policy) { p.Spec.Waves[1].Name = "canary" }, CodeWaveNameInvalid, "spec.waves[1].name", `"canary" is already used by spec.waves[0]`},
		{"rest early", func(p *Policy) { p.Spec.Waves[1].Name = "rest"; p.Spec.Waves[2].Name = "all" }, CodeWaveNameInvalid, "spec.waves[1].name", "reserved for the last wave"},
		{"rest below 100", func(p *Policy) { p.Spec.Waves[2].Percent = 90 }, CodeWaveNameInvalid, "spec.waves[2].name", "must have percent: 100"},
		{"maxConcurrent", func(p *Policy) { p.Spec.MaxConcurrent = &neg }, CodeValueInvalid, "spec.maxConcurrent", "got -1"},
		{"maxFailed", func(p *Policy) { p.Spec.FailureThreshold.MaxFailed = -2 }, CodeValueInvalid, "spec.failureThreshold.maxFailed", "got -2"},
		{"maxFailedPercent", func(p *Policy) { p.Spec.FailureThreshold.MaxFailedPercent = 150 }, CodeValueInvalid, "spec.failureThreshold.maxFailedPercent", "got 150"},
		{"onFailure", func(p *Policy) { p.Spec.OnFailure = "retry" }, CodeValueInvalid, "spec.onFailure", `"retry" is not supported`},
		{"healthWait", func(p *Policy) { p.Spec.HealthWait = -time.Second }, CodeDurationInvalid, "spec.healthWait", "healthWait must not be negative, got -1s"},
		{"applyTimeout", func(p *Policy) { p.Spec.ApplyTimeout = -time.Minute }, CodeDurationInvalid, "spec.applyTimeout", "got -1m0s"},
		{"offlineGracePeriod", func(p *Policy) { p.Spec.OfflineGracePeriod = -time.Hour }, CodeDurationInvalid, "spec.offlineGracePeriod", "got -1h0m0s"},
		{"defaultTimezone Local", func(p *Policy) { p.Spec.DefaultTimezone = "Local" }, CodeTimezoneInvalid, "spec.defaultTimezone", "Local is never accepted"},
		{"defaultTimezone agent", func(p *Policy) { p.Spec.DefaultTimezone = "agent" }, CodeTimezoneInvalid, "spec.defaultTimezone", "cannot be agent"},
		{"window zone", func(p *Policy) { p.Spec.MaintenanceWindows[0].Timezone = "Nowhere/City" }, CodeTimezoneInvalid, "spec.maintenanceWindows[0].timezone", `"Nowhere/City"`},
		{"window day", func(p *Policy) { p.Spec.MaintenanceWindows[0].Days = []time.Weekday{1, 7} }, CodeWindowInvalid, "spec.maintenanceWindows[0].days[1]", "weekday 7 is out of range"},
		{"window start", func(p *Policy) { p.Spec.MaintenanceWindows[0].Start = 1440 }, CodeWindowInvalid, "spec.maintenanceWindows[0].start", "got 1440 minutes"},
		{"window end", func(p *Policy) { p.Spec.MaintenanceWindows[0].End = -1 }, CodeWindowInvalid, "spec.maintenanceWindows[0].end", "got -1 minutes"},
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
