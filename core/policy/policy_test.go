package policy

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
)

func TestBuiltIn(t *testing.T) {
	for _, tt := range []struct {
		kind         Kind
		applyTimeout time.Duration
	}{
		{kind: KindConfig, applyTimeout: 10 * time.Minute},  // configuration
		{kind: KindVersion, applyTimeout: 30 * time.Minute}, // collector version
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
			Approvals:          Approvals{Required: 1, Expiry: 72 * time.Hour},
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
		{name: "healthWait missing", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.HealthWait == 60*time.Second }},
		{name: "healthWait 0", kind: KindConfig, spec: Spec{HealthWait: 0}, check: func(s Snapshot) bool { return s.HealthWait == 60*time.Second }},
		{name: "healthWait set", kind: KindConfig, spec: Spec{HealthWait: 5 * time.Minute}, check: func(s Snapshot) bool { return s.HealthWait == 5*time.Minute }},
		{name: "maxConcurrent missing", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.MaxConcurrent == 50 }},
		{name: "maxConcurrent 0 stays unlimited", kind: KindConfig, spec: Spec{MaxConcurrent: &zero}, check: func(s Snapshot) bool { return s.MaxConcurrent == 0 }},
		{name: "maxConcurrent set", kind: KindConfig, spec: Spec{MaxConcurrent: &seven}, check: func(s Snapshot) bool { return s.MaxConcurrent == 7 }},
		{name: "applyTimeout config", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.ApplyTimeout == 10*time.Minute }},
		{name: "applyTimeout version", kind: KindVersion, spec: Spec{}, check: func(s Snapshot) bool { return s.ApplyTimeout == 30*time.Minute }},
		{name: "explicit applyTimeout wins", kind: KindVersion, spec: Spec{ApplyTimeout: 5 * time.Minute}, check: func(s Snapshot) bool { return s.ApplyTimeout == 5*time.Minute }},
		{name: "offlineGracePeriod missing", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.OfflineGracePeriod == 15*time.Minute }},
		{name: "offlineGracePeriod set", kind: KindConfig, spec: Spec{OfflineGracePeriod: time.Hour}, check: func(s Snapshot) bool { return s.OfflineGracePeriod == time.Hour }},
		{name: "both thresholds 0", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.FailureThreshold == Threshold{MaxFailed: 1} }},
		{name: "only maxFailedPercent", kind: KindConfig, spec: Spec{FailureThreshold: Threshold{MaxFailedPercent: 10}}, check: func(s Snapshot) bool { return s.FailureThreshold == Threshold{0, 10} }},
		{name: "maxFailed set", kind: KindConfig, spec: Spec{FailureThreshold: Threshold{MaxFailed: 3}}, check: func(s Snapshot) bool { return s.FailureThreshold == Threshold{3, 0} }},
		{name: "onFailure missing", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.OnFailure == OnFailurePause }},
		{name: "onFailure rollback", kind: KindConfig, spec: Spec{OnFailure: OnFailureRollback}, check: func(s Snapshot) bool { return s.OnFailure == OnFailureRollback }},
		{name: "timezoneAttribute missing", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.TimezoneAttribute == "site.timezone" }},
		{name: "no waves", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return reflect.DeepEqual(s.Waves, []Wave{{Name: "all", Percent: 100}}) }},
		{name: "no windows", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return s.MaintenanceWindows == nil }},
		{name: "not built in", kind: KindConfig, spec: Spec{}, check: func(s Snapshot) bool { return !s.BuiltIn && s.Kind == KindConfig }},
		{name: "onFailure stop is pause", kind: KindConfig, spec: Spec{OnFailure: OnFailureStop}, check: func(s Snapshot) bool { return s.OnFailure == OnFailurePause }},
		{name: "onFailure rollback-wave", kind: KindConfig, spec: Spec{OnFailure: OnFailureRollbackWave}, check: func(s Snapshot) bool { return s.OnFailure == OnFailureRollbackWave }},
		{name: "onFailure rollback-all", kind: KindConfig, spec: Spec{OnFailure: OnFailureRollbackAll}, check: func(s Snapshot) bool { return s.OnFailure == OnFailureRollbackAll }},
		// A policy without the topology fields keeps one batch per pass: no maxUnavailable, no topology.
		{name: "no topology fields", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100}}}, check: func(s Snapshot) bool {
			return s.Waves[0] == Wave{Name: "a", Percent: 100} && s.Topology == Topology{} && s.MaxUnavailable.IsZero()
		}},
		{name: "by az is zone", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100, By: SplitAZ}}}, check: func(s Snapshot) bool { return s.Waves[0].By == SplitZone }},
		{name: "by: parallelRegions 1, maxUnavailable 1", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100, By: SplitRegion}}}, check: func(s Snapshot) bool {
			return s.Waves[0].ParallelRegions == 1 && s.Waves[0].MaxUnavailable == Amount{Value: 1}
		}},
		{name: "by: values as written", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100, By: SplitZone, ParallelRegions: 3, MaxUnavailable: Amount{Value: 10, Percent: true}}}}, check: func(s Snapshot) bool {
			return s.Waves[0].ParallelRegions == 3 && s.Waves[0].MaxUnavailable == Amount{Value: 10, Percent: true}
		}},
		{name: "by: the rollout's maxUnavailable", kind: KindConfig, spec: Spec{MaxUnavailable: Amount{Value: 25, Percent: true}, Waves: []Wave{{Name: "a", Percent: 100, By: SplitZone}}}, check: func(s Snapshot) bool {
			return s.Waves[0].MaxUnavailable == Amount{Value: 25, Percent: true} && s.MaxUnavailable == Amount{Value: 25, Percent: true}
		}},
		{name: "wave's maxUnavailable wins", kind: KindConfig, spec: Spec{MaxUnavailable: Amount{Value: 25, Percent: true}, Waves: []Wave{{Name: "a", Percent: 100, MaxUnavailable: Amount{Value: 1}}}}, check: func(s Snapshot) bool {
			return s.Waves[0].MaxUnavailable == Amount{Value: 1}
		}},
		{name: "no by: the rollout's maxUnavailable", kind: KindConfig, spec: Spec{MaxUnavailable: Amount{Value: 2}, Waves: []Wave{{Name: "a", Percent: 100}}}, check: func(s Snapshot) bool {
			return s.Waves[0].MaxUnavailable == Amount{Value: 2} && s.Waves[0].ParallelRegions == 0
		}},
		{name: "default wave: the rollout's maxUnavailable", kind: KindConfig, spec: Spec{MaxUnavailable: Amount{Value: 2}}, check: func(s Snapshot) bool { return s.Waves[0].MaxUnavailable == Amount{Value: 2} }},
		{name: "topology defaults with by", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100, By: SplitZone}}}, check: func(s Snapshot) bool {
			return s.Topology == Topology{RegionAttribute: "cloud.region", ZoneAttribute: "cloud.availability_zone", HostAttribute: "host.name"}
		}},
		{name: "topology as written", kind: KindConfig, spec: Spec{Topology: Topology{ZoneAttribute: "site.zone"}, Waves: []Wave{{Name: "a", Percent: 100, By: SplitZone}}}, check: func(s Snapshot) bool {
			return s.Topology == Topology{RegionAttribute: "cloud.region", ZoneAttribute: "site.zone", HostAttribute: "host.name"}
		}},
		{name: "regions kept", kind: KindConfig, spec: Spec{Regions: []string{"us-1", "eu-1"}, Waves: []Wave{{Name: "a", Percent: 100, By: SplitZone}}}, check: func(s Snapshot) bool { return reflect.DeepEqual(s.Regions, []string{"us-1", "eu-1"}) }},
		{name: "bake kept", kind: KindConfig, spec: Spec{Waves: []Wave{{Name: "a", Percent: 100, Bake: time.Hour}}}, check: func(s Snapshot) bool { return s.Waves[0].Bake == time.Hour }},
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
		Waves:              []Wave{{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"wave": "canary"}, MatchConditions: selector.Conditions{{Key: "r", Op: selector.In, Values: []string{"eu-1"}}}}, By: SplitZone}},
		Regions:            []string{"eu-1"},
		MaintenanceWindows: []windows.Window{{Days: []time.Weekday{time.Monday}, Start: 60, End: 120}},
	}}
	s := p.Snapshot(KindConfig)
	p.Spec.Waves[0].Name = "changed"
	p.Spec.Waves[0].Selector.MatchAttributes["wave"] = "changed"
	p.Spec.MaintenanceWindows[0].Days[0] = time.Sunday
	p.Spec.MaintenanceWindows[0].Start = 0
	p.Spec.Regions = append(p.Spec.Regions[:0], "changed")
	p.Spec.Waves[0].Selector.MatchConditions[0].Values[0] = "changed"

	if w := s.Waves[0]; w.Name != "canary" || w.Selector.MatchAttributes["wave"] != "canary" {
		t.Errorf("snapshot wave changed with the policy: %+v %v", w, w.Selector)
	}
	if s.Regions[0] != "eu-1" || s.Waves[0].Selector.MatchConditions[0].Values[0] != "eu-1" {
		t.Errorf("snapshot regions or conditions changed with the policy: %v %v", s.Regions, s.Waves[0].Selector.MatchConditions)
	}
	if w := s.MaintenanceWindows[0]; w.Days[0] != time.Monday || w.Start != 60 {
		t.Errorf("snapshot window changed with the policy: %+v", w)
	}
}

func TestAmount_Of(t *testing.T) {
	tests := []struct {
		amount Amount
		total  int
		want   int
	}{
		{amount: Amount{Value: 25, Percent: true}, total: 10, want: 2},   // 250/100, rounded down
		{amount: Amount{Value: 25, Percent: true}, total: 4, want: 1},    // exactly 1
		{amount: Amount{Value: 25, Percent: true}, total: 3, want: 1},    // 0 → at least 1
		{amount: Amount{Value: 100, Percent: true}, total: 7, want: 7},   // the whole pass
		{amount: Amount{Value: 1, Percent: true}, total: 1000, want: 10}, // 1%
		{amount: Amount{Value: 3}, total: 10, want: 3},                   // a number
		{amount: Amount{Value: 30}, total: 10, want: 30},                 // more than the pass: one batch
		{amount: Amount{}, total: 7, want: 7},                            // unset: one batch
		{amount: Amount{}, total: 0, want: 1},                            // unset, empty pass: still at least 1
	}
	for _, tt := range tests {
		if got := tt.amount.Of(tt.total); got != tt.want {
			t.Errorf("%s of %d = %d, want %d", tt.amount, tt.total, got, tt.want)
		}
	}
}

func TestAmount_JSON(t *testing.T) {
	tests := []struct {
		amount Amount
		json   string
	}{
		{amount: Amount{Value: 3}, json: `3`},                     // a number stays a number
		{amount: Amount{Value: 25, Percent: true}, json: `"25%"`}, // a percentage is a string
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.amount)
		if err != nil || string(data) != tt.json {
			t.Errorf("%v: JSON %s, %v; want %s", tt.amount, data, err, tt.json)
		}
		var back Amount
		if err := json.Unmarshal(data, &back); err != nil || back != tt.amount {
			t.Errorf("%s: read back %v, %v", data, back, err)
		}
	}
	for _, in := range []string{`"25"`, `"x%"`, `true`, `2.5`} {
		var a Amount
		if err := json.Unmarshal([]byte(in), &a); err == nil {
			t.Errorf("%s: want an error, got %v", in, a)
		}
	}
}

func TestSnapshot_RestWave(t *testing.T) {
	s := (Policy{Name: "p", Spec: Spec{MaxUnavailable: Amount{Value: 5}, Waves: []Wave{{Name: "a", Percent: 50}}}}).Snapshot(KindConfig)
	if got, want := s.RestWave(), (Wave{Name: "rest", Percent: 100, MaxUnavailable: Amount{Value: 5}}); got != want {
		t.Errorf("RestWave = %+v, want %+v", got, want)
	}
}
