package selection

import (
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/rollout"
)

var releases = []string{"0.159.0", "0.160.0", "v0.161.0", "0.162.0", "0.162.1-rc.1", "0.163.0", "0.164.0"}

func TestOptions_NotAllowedCode(t *testing.T) {
	tests := []struct {
		name   string
		f      *fleet.Fleet
		active *RolloutSummary
		want   string
	}{
		{name: "allowed", f: edge(), active: nil, want: ""},
		{name: "frame disabled", f: edge(disabled), active: nil, want: "selection_disabled"},
		{name: "block missing", f: edge(noBlock), active: nil, want: "selection_disabled"},
		{name: "executor none", f: edge(executorNone), active: nil, want: "no_executor"},
		{name: "disabled before no executor", f: edge(disabled, executorNone), active: nil, want: "selection_disabled"},
		{name: "version rollout failed", f: edge(), active: &RolloutSummary{ID: "r1", Status: rollout.Failed}, want: "blocking_rollout"},
		{name: "version rollout rolling_back", f: edge(), active: &RolloutSummary{ID: "r1", Status: rollout.RollingBack}, want: "blocking_rollout"},
		{name: "no executor before blocking", f: edge(executorNone), active: &RolloutSummary{ID: "r1", Status: rollout.Failed}, want: "no_executor"},
		{name: "paused rollout does not block", f: edge(), active: &RolloutSummary{ID: "r1", Status: rollout.Paused}, want: ""},   // the planner supersedes it
		{name: "running rollout does not block", f: edge(), active: &RolloutSummary{ID: "r1", Status: rollout.Running}, want: ""}, // the planner supersedes it
		{name: "fleet missing", f: nil, active: nil, want: "selection_disabled"},
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
		{name: "range: known non-prerelease releases in it", f: edge(), s: nil, want: []string{"0.163.0", "0.162.0", "0.161.0"}},                                                // 0.162.1-rc.1 is a prerelease, 0.164.0 and older are outside
		{name: "list entries, known or not", f: edge(listFrame("0.162.0", "0.170.0", "0.162.1-rc.1")), s: nil, want: []string{"0.170.0", "0.162.1-rc.1", "0.162.0", "0.161.0"}}, // plus the Git target
		{name: "Git target outside the frame", f: edge(gitTarget("0.150.0")), s: nil, want: []string{"0.163.0", "0.162.0", "0.161.0", "0.150.0"}},
		{name: "selection version outside the frame", f: edge(rangeFrame("<=0.161.0")), s: chosen("0.162.0"), want: []string{"0.162.0", "0.161.0", "0.160.0", "0.159.0"}}, // the hold's version is listed
		{name: "no frame: only the Git target", f: edge(disabled), s: chosen("0.162.0"), want: []string{"0.161.0"}},
		{name: "no frame, no Git target: nothing", f: edge(noBlock, gitTarget("")), s: nil, want: []string{}},
		{name: "executor none still lists the frame", f: edge(executorNone), s: nil, want: []string{"0.163.0", "0.162.0", "0.161.0"}},
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
		{name: "selectable", f: edge(), s: nil, members: nil, version: "0.162.0", want: ""},
		{name: "current target from Git", f: edge(), s: nil, members: nil, version: "0.161.0", want: "current_target"},
		{name: "current target from UI", f: edge(), s: chosen("0.162.0"), members: nil, version: "0.162.0", want: "current_target"},
		{name: "unknown version", f: edge(listFrame("0.170.0")), s: nil, members: nil, version: "0.170.0", want: "unknown_version"},
		{name: "outside the frame", f: edge(gitTarget("0.159.0")), s: chosen("0.162.0", func(s *Selection) { s.GitVersion = "0.159.0" }), members: nil, version: "0.159.0", want: "outside_frame"}, // also below the target: outside wins
		{name: "downgrade below the target", f: edge(rangeFrame(">=0.160.0")), s: chosen("0.163.0"), members: nil, version: "0.162.0", want: "downgrade_not_allowed"},
		{name: "downgrade allowed", f: edge(rangeFrame(">=0.160.0"), allowDowngrade), s: chosen("0.163.0"), members: nil, version: "0.162.0", want: ""},
		{name: "Git target below the UI target", f: edge(), s: chosen("0.163.0"), members: nil, version: "0.161.0", want: "downgrade_not_allowed"},
		{name: "hold: members are the reference", f: edge(rangeFrame("<=0.162.0")), s: chosen("0.163.0"), members: []string{"0.160.0", "v0.162.0"}, version: "0.161.0", want: "downgrade_not_allowed"},
		{name: "hold: at the highest member", f: edge(rangeFrame("<=0.162.0")), s: chosen("0.163.0"), members: []string{"0.160.0", "v0.162.0"}, version: "0.162.0", want: ""},
		{name: "no target: members are the reference", f: edge(gitTarget(""), rangeFrame(">=0.160.0")), s: nil, members: []string{"0.162.0"}, version: "0.160.0", want: "downgrade_not_allowed"},
		{name: "no target, no members: no reference", f: edge(gitTarget(""), rangeFrame(">=0.159.0")), s: nil, members: nil, version: "0.159.0", want: ""},
		{name: "current_target wins over unknown", f: edge(gitTarget("0.161.5"), rangeFrame(">=0.161.0")), s: nil, members: nil, version: "0.161.5", want: "current_target"},
		{name: "unknown wins over outside", f: edge(), s: nil, members: nil, version: "0.150.5", want: "unknown_version"}, // also below the target
		{name: "prerelease wins over downgrade", f: edge(rangeFrame(">=0.100.0")), s: chosen("0.163.0"), members: nil, version: "0.162.1-rc.1", want: "prerelease_not_allowed"},
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
		{name: "range without prerelease part", f: pre, want: "prerelease_not_allowed"},
		{name: "listed prerelease", f: edge(listFrame("0.162.1-rc.1")), want: ""},
		{name: "prerelease outside the range", f: edge(rangeFrame(">=0.163.0")), want: "outside_frame"},
		{name: "prerelease outside a list", f: edge(listFrame("0.162.0")), want: "outside_frame"},
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
