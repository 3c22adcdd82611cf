package policy

import (
	"reflect"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/windows"
)

func TestBuiltIn(t *testing.T) {
	for _, tt := range []struct {
		kind         Kind
		applyTimeout time.Duration
	}{
		{KindConfig, 10 * time.Minute},  // configuration
		{KindVersion, 30 * time.Minute}, // collector version
	} {
		want := Snapshot{
			Name: "default", BuiltIn: true, Kind: tt.kind,
			Waves:              []Wave{{Name: "all", Percent: 100}},
			MaxConcurrent:      50,
			HealthWait:         60 * time.Second,
			ApplyTimeout:       tt.applyTimeout,
			OfflineGracePeriod: 15 * time.Minute,
			FailureThreshold:   Threshold{MaxFailed: 1},
			OnFailure:          OnFailurePause,
			TimezoneAttribute:  "site.timezone",
		}
		if got := BuiltIn(tt.kind); !reflect.DeepEqual(got, want) {
			t.Errorf("BuiltIn(%s) =\n%+v\nwant\n%+v", tt.kind, got, want)
		}
	}
}

func TestSnapshot_Defaults(t *testing.T) {
	zero, seven := 0, 7
	tests := []struct {
		name  string
		kind  Kind
		spec  Spec
		check func(s Snapshot) bool
	}{
		{"healthWait missing", KindConfig, Spec{}, func(s Snapshot) bool { return s.HealthWait == 60*time.Second }},
		{"healthWait 0", KindConfig, Spec{HealthWait: 0}, func(s Snapshot) bool { return s.HealthWait == 60*time.Second }},
		{"healthWait set", KindConfig, Spec{HealthWait: 5 * time.Minute}, func(s Snapshot) bool { return s.HealthWait == 5*time.Minute }},
		{"maxConcurrent missing", KindConfig, Spec{}, func(s Snapshot) bool { return s.MaxConcurrent == 50 }},
		{"maxConcurrent 0 stays unlimited", KindConfig, Spec{MaxConcurrent: &zero}, func(s Snapshot) bool { return s.MaxConcurrent == 0 }},
		{"maxConcurrent set", KindConfig, Spec{MaxConcurrent: &seven}, func(s Snapshot) bool { return s.MaxConcurrent == 7 }},
		{"applyTimeout config", KindConfig, Spec{}, func(s Snapshot) bool { return s.ApplyTimeout == 10*time.Minute }},
		{"applyTimeout version", KindVersion, Spec{}, func(s Snapshot) bool { return s.ApplyTimeout == 30*time.Minute }},
		{"explicit applyTimeout wins", KindVersion, Spec{ApplyTimeout: 5 * time.Minute}, func(s Snapshot) bool { return s.ApplyTimeout == 5*time.Minute }},
		{"offlineGracePeriod missing", KindConfig, Spec{}, func(s Snapshot) bool { return s.OfflineGracePeriod == 15*time.Minute }},
		{"offlineGracePeriod set", KindConfig, Spec{OfflineGracePeriod: time.Hour}, func(s Snapshot) bool { return s.OfflineGracePeriod == time.Hour }},
		{"both thresholds 0", KindConfig, Spec{}, func(s Snapshot) bool { return s.FailureThreshold == Threshold{MaxFailed: 1} }},
		{"only maxFailedPercent", KindConfig, Spec{FailureThreshold: Threshold{MaxFailedPercent: 10}}, func(s Snapshot) bool { return s.FailureThreshold == Threshold{0, 10} }},
		{"maxFailed set", KindConfig, Spec{FailureThreshold: Threshold{MaxFailed: 3}}, func(s Snapshot) bool { return s.FailureThreshold == Threshold{3, 0} }},
		{"onFailure missing", KindConfig, Spec{}, func(s Snapshot) bool { return s.OnFailure == OnFailurePause }},
		{"onFailure rollback", KindConfig, Spec{OnFailure: OnFailureRollback}, func(s Snapshot) bool { return s.OnFailure == OnFailureRollback }},
		{"timezoneAttribute missing", KindConfig, Spec{}, func(s Snapshot) bool { return s.TimezoneAttribute == "site.timezone" }},
		{"no waves", KindConfig, Spec{}, func(s Snapshot) bool { return reflect.DeepEqual(s.Waves, []Wave{{Name: "all", Percent: 100}}) }},
		{"no windows", KindConfig, Spec{}, func(s Snapshot) bool { return s.MaintenanceWindows == nil }},
		{"not built in", KindConfig, Spec{}, func(s Snapshot) bool { return !s.BuiltIn && s.Kind == KindConfig }},
	}
	for _, tt := range tests {
		if s := (Policy{Name: "p", Spec: tt.spec}).Snapshot(tt.kind); !tt.check(s) {
			t.Errorf("%s: snapshot %+v", tt.name, s)
		}
	}
}

// The snapshot is what a running rollout keeps; a later change of the policy
// value, down to a selector map or a days slice, must not reach it.
func TestSnapshot_DeepCopy(t *testing.T) {
	p := Policy{Name: "p", Spec: Spec{
		Waves:              []Wave{{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"wave": "canary"}}}},
		MaintenanceWindows: []windows.Window{{Days: []time.Weekday{time.Monday}, Start: 60, End: 120}},
	}}
	s := p.Snapshot(KindConfig)
	p.Spec.Waves[0].Name = "changed"
	p.Spec.Waves[0].Selector.MatchAttributes["wave"] = "changed"
	p.Spec.MaintenanceWindows[0].Days[0] = time.Sunday
	p.Spec.MaintenanceWindows[0].Start = 0

	if w := s.Waves[0]; w.Name != "canary" || w.Selector.MatchAttributes["wave"] != "canary" {
		t.Errorf("snapshot wave changed with the policy: %+v %v", w, w.Selector)
	}
	if w := s.MaintenanceWindows[0]; w.Days[0] != time.Monday || w.Start != 60 {
		t.Errorf("snapshot window changed with the policy: %+v", w)
	}
}
