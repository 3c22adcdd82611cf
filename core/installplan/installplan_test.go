package installplan

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func git(v string) selection.Target { return selection.Target{Version: v, Source: selection.SourceGit} }
func ui(v string) selection.Target  { return selection.Target{Version: v, Source: selection.SourceUI} }

func planned(v string) *selection.Selection {
	return &selection.Selection{Fleet: "edge", Version: v, State: selection.Active, PlannedAt: &t0}
}

func unplanned(v string) *selection.Selection {
	return &selection.Selection{Fleet: "edge", Version: v, State: selection.Active}
}

func versionRollout(status rollout.Status, to string, from ...string) *Rollout {
	return &Rollout{ID: "r-1", Status: status, ToRef: to, FromRefs: from}
}

// want is the expected plan in short: ready with version and source, or
// the reason of the wait, or no target.
type want struct {
	ready     bool
	version   string
	source    Source
	rolloutID string
	reason    string
	retry     int
	noTarget  bool
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want want
	}{
		// The effective target.
		{name: "git target, nothing recorded yet", in: Input{Target: git("0.161.0")},
			want: want{ready: true, version: "0.161.0", source: SourceGit}}, // an empty fleet: the planner records nothing for it
		{name: "git target recorded by every member", in: Input{Target: git("0.161.0"), RecordedVersions: []string{"0.161.0", "0.161.0"}},
			want: want{ready: true, version: "0.161.0", source: SourceGit}},
		{name: "git target recorded by one member, a newcomer records none", in: Input{Target: git("0.161.0"), RecordedVersions: []string{"0.161.0", ""}},
			want: want{ready: true, version: "0.161.0", source: SourceGit}},
		{name: "git target recorded, a member moved in from another fleet", in: Input{Target: git("0.161.0"), RecordedVersions: []string{"0.161.0", "0.150.0"}},
			want: want{ready: true, version: "0.161.0", source: SourceGit}}, // one record of the target is enough
		{name: "planned ui selection", in: Input{Target: ui("0.162.0"), Selection: planned("0.162.0"), RecordedVersions: []string{"0.161.0"}},
			want: want{ready: true, version: "0.162.0", source: SourceUI}}, // plannedAt is the record; members follow

		// Not handled yet.
		{name: "git target changed, members record the old one", in: Input{Target: git("0.162.0"), RecordedVersions: []string{"0.161.0", "0.161.0", ""}},
			want: want{reason: ReasonTargetNotPlanned, retry: RetryTargetSeconds}},
		{name: "ui selection without plannedAt", in: Input{Target: ui("0.162.0"), Selection: unplanned("0.162.0"), RecordedVersions: []string{"0.162.0"}},
			want: want{reason: ReasonSelectionNotPlanned, retry: RetrySelectionSeconds}},
		{name: "ui target without a selection (never happens, but never ready)", in: Input{Target: ui("0.162.0")},
			want: want{reason: ReasonSelectionNotPlanned, retry: RetrySelectionSeconds}},
		{name: "running rollout toward the old target", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.161.0", "0.160.0")},
			want: want{reason: ReasonTargetNotPlanned, retry: RetryTargetSeconds}},

		// The straggler exception.
		{name: "pending rollout", in: Input{Target: git("0.162.0"), RecordedVersions: []string{"0.162.0"}, Rollout: versionRollout(rollout.Pending, "0.162.0", "0.161.0", "0.161.0")},
			want: want{ready: true, version: "0.161.0", source: SourceRollout, rolloutID: "r-1"}},
		{name: "running rollout", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.162.0", "0.161.0")},
			want: want{ready: true, version: "0.161.0", source: SourceRollout, rolloutID: "r-1"}},
		{name: "waiting for approval, ui target", in: Input{Target: ui("0.162.0"), Selection: planned("0.162.0"), Rollout: versionRollout(rollout.WaitingApproval, "0.162.0", "0.161.0")},
			want: want{ready: true, version: "0.161.0", source: SourceRollout, rolloutID: "r-1"}},
		{name: "from versions differ: the most common", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.162.0", "0.160.0", "0.161.0", "0.160.0")},
			want: want{ready: true, version: "0.160.0", source: SourceRollout, rolloutID: "r-1"}},
		{name: "from versions tie: the newest", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.162.0", "0.99.0", "0.161.0", "", "")},
			want: want{ready: true, version: "0.161.0", source: SourceRollout, rolloutID: "r-1"}}, // semver, not text; empty ones do not count
		{name: "from version with a v", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.162.0", "v0.161.0")},
			want: want{ready: true, version: "0.161.0", source: SourceRollout, rolloutID: "r-1"}},
		{name: "no target had a version", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Running, "0.162.0", "")},
			want: want{ready: true, version: "0.162.0", source: SourceGit, rolloutID: "r-1"}},
		{name: "paused rollout: the target", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Paused, "0.162.0", "0.161.0")},
			want: want{ready: true, version: "0.162.0", source: SourceGit}},
		{name: "failed rollout: the target", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Failed, "0.162.0", "0.161.0")},
			want: want{ready: true, version: "0.162.0", source: SourceGit}},
		{name: "rolling back: the target", in: Input{Target: ui("0.162.0"), Selection: planned("0.162.0"), Rollout: versionRollout(rollout.RollingBack, "0.162.0", "0.161.0")},
			want: want{ready: true, version: "0.162.0", source: SourceUI}},
		{name: "paused rollout toward another version", in: Input{Target: git("0.162.0"), Rollout: versionRollout(rollout.Paused, "0.161.0", "0.160.0")},
			want: want{ready: true, version: "0.162.0", source: SourceGit}}, // only the three statuses take stragglers

		// No target.
		{name: "hold", in: Input{Target: selection.Target{Source: selection.SourceHold}, Selection: &selection.Selection{State: selection.Invalidated}},
			want: want{noTarget: true}},
		{name: "none", in: Input{Target: selection.Target{Source: selection.SourceNone}, Rollout: versionRollout(rollout.Running, "0.162.0", "0.161.0")},
			want: want{noTarget: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Fleet, tt.in.Distribution = "edge", "otelcol-contrib"
			p := Decide(tt.in)
			got := want{ready: p.Ready, version: p.Version, source: p.Source, rolloutID: p.RolloutID, reason: p.Reason, retry: p.RetryAfterSeconds, noTarget: p.NoTarget}
			if got != tt.want {
				t.Errorf("plan %+v\n got %+v\nwant %+v", p, got, tt.want)
			}
			if p.Detail == "" || p.Fleet != "edge" || p.Target != tt.in.Target || p.Distribution != "otelcol-contrib" {
				t.Errorf("plan %+v: detail, fleet, target and distribution are always there", p)
			}
			if p.Ready && (p.Version == "" || p.Reason != "" || p.RetryAfterSeconds != 0) {
				t.Errorf("a ready plan has a version and no reason: %+v", p)
			}
		})
	}
}

func TestMostCommon(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{in: nil, want: ""},
		{in: []string{"0.160.0", "0.161.0", "0.161.0", "0.160.0"}, want: "0.161.0"}, // two each: the newer
		{in: []string{"0.99.0", "0.100.0"}, want: "0.100.0"},                        // by precedence, not text
		{in: []string{"dev", "0.1.0"}, want: "0.1.0"},                               // a version before a name
		{in: []string{"dev", "dev", "0.1.0"}, want: "dev"},                          // but counts first
	}
	for _, tt := range tests {
		if got := mostCommon(tt.in); got != tt.want {
			t.Errorf("mostCommon(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
