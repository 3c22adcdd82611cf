package selection

import (
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/rollout"
)

var releases = []string{"0.159.0", "0.160.0", "v0.161.0", "0.162.0", "0.162.1-rc.1", "0.163.0", "0.164.0"}

func TestOptions_NotAllowedCode(t *testing.T) {
	tests := []struct {
		name   string
		f      *fleet.Fleet
		active *RolloutSummary
		want   string
	}{
		{"allowed", edge(), nil, ""},
		{"frame disabled", edge(disabled), nil, "selection_disabled"},
		{"block missing", edge(noBlock), nil, "selection_disabled"},
		{"executor none", edge(executorNone), nil, "no_executor"},
		{"disabled before no executor", edge(disabled, executorNone), nil, "selection_disabled"},
		{"version rollout failed", edge(), &RolloutSummary{ID: "r1", Status: rollout.Failed}, "blocking_rollout"},
		{"version rollout rolling_back", edge(), &RolloutSummary{ID: "r1", Status: rollout.RollingBack}, "blocking_rollout"},
		{"no executor before blocking", edge(executorNone), &RolloutSummary{ID: "r1", Status: rollout.Failed}, "no_executor"},
		{"paused rollout does not block", edge(), &RolloutSummary{ID: "r1", Status: rollout.Paused}, ""},   // the planner supersedes it
		{"running rollout does not block", edge(), &RolloutSummary{ID: "r1", Status: rollout.Running}, ""}, // the planner supersedes it
		{"fleet missing", nil, nil, "selection_disabled"},
	}
	for _, tt := range tests {
		got := Options(OptionsInput{Fleet: tt.f, Releases: releases, ActiveVersionRollout: tt.active})
		if got.NotAllowedCode != tt.want || got.Allowed != (tt.want == "") {
			t.Errorf("%s: allowed %v code %q, want code %q", tt.name, got.Allowed, got.NotAllowedCode, tt.want)
		}
		for _, o := range got.Options {
			if o.Selectable && !got.Allowed {
				t.Errorf("%s: option %s selectable while not allowed", tt.name, o.Version)
			}
		}
	}
}

func TestOptions_Candidates(t *testing.T) {
	tests := []struct {
		name string
		f    *fleet.Fleet
		s    *Selection
		want []string
	}{
		{"range: known non-prerelease releases in it", edge(), nil, []string{"0.163.0", "0.162.0", "0.161.0"}},                                                // 0.162.1-rc.1 is a prerelease, 0.164.0 and older are outside
		{"list entries, known or not", edge(listFrame("0.162.0", "0.170.0", "0.162.1-rc.1")), nil, []string{"0.170.0", "0.162.1-rc.1", "0.162.0", "0.161.0"}}, // plus the Git target
		{"Git target outside the frame", edge(gitTarget("0.150.0")), nil, []string{"0.163.0", "0.162.0", "0.161.0", "0.150.0"}},
		{"selection version outside the frame", edge(rangeFrame("<=0.161.0")), chosen("0.162.0"), []string{"0.162.0", "0.161.0", "0.160.0", "0.159.0"}}, // the hold's version is listed
		{"no frame: only the Git target", edge(disabled), chosen("0.162.0"), []string{"0.161.0"}},
		{"no frame, no Git target: nothing", edge(noBlock, gitTarget("")), nil, []string{}},
		{"executor none still lists the frame", edge(executorNone), nil, []string{"0.163.0", "0.162.0", "0.161.0"}},
	}
	for _, tt := range tests {
		got := Options(OptionsInput{Fleet: tt.f, Selection: tt.s, Releases: releases})
		versions := []string{}
		for _, o := range got.Options {
			versions = append(versions, o.Version)
		}
		if !reflect.DeepEqual(versions, tt.want) {
			t.Errorf("%s: options %q, want %q", tt.name, versions, tt.want)
		}
	}
}

func TestOptions_ReasonCode(t *testing.T) {
	pre := edge(rangeFrame(">=0.161.0"))
	tests := []struct {
		name    string
		f       *fleet.Fleet
		s       *Selection
		members []string
		version string
		want    string
	}{
		{"selectable", edge(), nil, nil, "0.162.0", ""},
		{"current target from Git", edge(), nil, nil, "0.161.0", "current_target"},
		{"current target from UI", edge(), chosen("0.162.0"), nil, "0.162.0", "current_target"},
		{"unknown version", edge(listFrame("0.170.0")), nil, nil, "0.170.0", "unknown_version"},
		{"outside the frame", edge(gitTarget("0.159.0")), chosen("0.162.0", func(s *Selection) { s.GitVersion = "0.159.0" }), nil, "0.159.0", "outside_frame"}, // also below the target: outside wins
		{"downgrade below the target", edge(rangeFrame(">=0.160.0")), chosen("0.163.0"), nil, "0.162.0", "downgrade_not_allowed"},
		{"downgrade allowed", edge(rangeFrame(">=0.160.0"), allowDowngrade), chosen("0.163.0"), nil, "0.162.0", ""},
		{"Git target below the UI target", edge(), chosen("0.163.0"), nil, "0.161.0", "downgrade_not_allowed"},
		{"hold: members are the reference", edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), []string{"0.160.0", "v0.162.0"}, "0.161.0", "downgrade_not_allowed"},
		{"hold: at the highest member", edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), []string{"0.160.0", "v0.162.0"}, "0.162.0", ""},
		{"no target: members are the reference", edge(gitTarget(""), rangeFrame(">=0.160.0")), nil, []string{"0.162.0"}, "0.160.0", "downgrade_not_allowed"},
		{"no target, no members: no reference", edge(gitTarget(""), rangeFrame(">=0.159.0")), nil, nil, "0.159.0", ""},
		{"current_target wins over unknown", edge(gitTarget("0.161.5"), rangeFrame(">=0.161.0")), nil, nil, "0.161.5", "current_target"},
		{"unknown wins over outside", edge(), nil, nil, "0.150.5", "unknown_version"}, // also below the target
		{"prerelease wins over downgrade", edge(rangeFrame(">=0.100.0")), chosen("0.163.0"), nil, "0.162.1-rc.1", "prerelease_not_allowed"},
	}
	for _, tt := range tests {
		c := newChooser(tt.f, Reconciled(tt.f, tt.s), releases, tt.members)
		if got := c.reason(tt.version); got != tt.want {
			t.Errorf("%s: reason(%s) = %q, want %q", tt.name, tt.version, got, tt.want)
		}
	}
	// Prereleases: a range without prerelease part refuses them as such; an
	// explicit list admits them; outside even a prerelease range is outside.
	preTests := []struct {
		name string
		f    *fleet.Fleet
		want string
	}{
		{"range without prerelease part", pre, "prerelease_not_allowed"},
		{"listed prerelease", edge(listFrame("0.162.1-rc.1")), ""},
		{"prerelease outside the range", edge(rangeFrame(">=0.163.0")), "outside_frame"},
		{"prerelease outside a list", edge(listFrame("0.162.0")), "outside_frame"},
	}
	for _, tt := range preTests {
		if got := newChooser(tt.f, nil, releases, nil).reason("0.162.1-rc.1"); got != tt.want {
			t.Errorf("%s: reason = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOptions_Answer(t *testing.T) {
	active := &RolloutSummary{ID: "r7", Status: rollout.Running, Origin: rollout.OriginUI, ToRef: "0.162.0"}
	f := edge(func(f *fleet.Fleet) { f.Rollout.VersionPolicy = "gv"; f.Update.Selection.RolloutPolicy = "ui" })
	got := Options(OptionsInput{Fleet: f, Selection: chosen("0.162.0"), Releases: releases, ActiveVersionRollout: active})
	want := FleetVersionOptions{
		Allowed: true, Target: Target{"0.162.0", SourceUI}, Executor: fleet.ExecutorUpdater, VersionPolicy: "ui", ActiveRollout: active,
		Options: []VersionOption{
			{Version: "0.163.0", Selectable: true},
			{Version: "0.162.0", ReasonCode: "current_target", IsSelected: true},
			{Version: "0.161.0", ReasonCode: "downgrade_not_allowed", IsGitTarget: true},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Options =\n%+v\nwant\n%+v", got, want)
	}
}

// A selection that Git already superseded is shown as the planner will
// leave it, before the planner stored that.
func TestOptions_ReadsThroughTheConflictRules(t *testing.T) {
	got := Options(OptionsInput{Fleet: edge(gitTarget("0.162.0")), Selection: chosen("0.163.0"), Releases: releases})
	if got.Target != (Target{"0.162.0", SourceGit}) {
		t.Errorf("target = %+v, want the new Git target (K1)", got.Target)
	}
	got = Options(OptionsInput{Fleet: edge(rangeFrame("<=0.162.0")), Selection: chosen("0.163.0"), Releases: releases})
	if got.Target != (Target{"", SourceHold}) {
		t.Errorf("target = %+v, want hold (K2b)", got.Target)
	}
}

func TestSortNewestFirst(t *testing.T) {
	got := []string{"0.9.0", "latest", "0.10.0", "0.10.0-rc.1", "1.0.0", "abc"}
	sortNewestFirst(got)
	want := []string{"1.0.0", "0.10.0", "0.10.0-rc.1", "0.9.0", "abc", "latest"} // semver order, then the rest lexically
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sortNewestFirst = %q, want %q", got, want)
	}
}
