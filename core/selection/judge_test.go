package selection

import (
	"testing"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/rollout"
)

func TestJudge_OneVersionAsTheOptionsSeeIt(t *testing.T) {
	tests := []struct {
		name       string
		f          *fleet.Fleet
		s          *Selection
		active     *RolloutSummary
		version    string
		selectable bool
		reason     string
		notAllowed string
	}{
		{name: "inside the frame", f: edge(), version: "0.162.0", selectable: true},
		{name: "with a v", f: edge(), version: "v0.162.0", selectable: true},
		{name: "the Git target", f: edge(), version: "0.161.0", reason: ReasonCurrentTarget},
		{name: "the selected version", f: edge(), s: chosen("0.162.0"), version: "0.162.0", reason: ReasonCurrentTarget},
		{name: "above the frame", f: edge(), version: "0.164.0", reason: ReasonOutsideFrame},
		{name: "not a known release", f: edge(), version: "0.162.5", reason: ReasonUnknownVersion},
		{name: "a prerelease the range would admit", f: edge(), version: "0.162.1-rc.1", reason: ReasonPrereleaseNotAllowed},
		{name: "below the target", f: edge(rangeFrame(">=0.159.0")), version: "0.160.0", reason: ReasonDowngradeNotAllowed},
		{name: "below the target, downgrades allowed", f: edge(rangeFrame(">=0.159.0"), allowDowngrade), version: "0.160.0", selectable: true},
		{name: "frame disabled", f: edge(disabled), version: "0.162.0", notAllowed: NotAllowedSelectionDisabled},
		{name: "frame disabled, the version outside it too", f: edge(disabled), version: "0.164.0", reason: ReasonOutsideFrame, notAllowed: NotAllowedSelectionDisabled},
		{name: "executor none", f: edge(executorNone), version: "0.162.0", notAllowed: NotAllowedNoExecutor},
		{name: "a failed rollout blocks", f: edge(), active: &RolloutSummary{ID: "r1", Status: rollout.Failed}, version: "0.162.0", notAllowed: NotAllowedBlockingRollout},
		{name: "no fleet", f: nil, version: "0.162.0", notAllowed: NotAllowedSelectionDisabled},
	}
	for _, tt := range tests {
		in := OptionsInput{Fleet: tt.f, Selection: tt.s, Releases: releases, ActiveVersionRollout: tt.active}
		j := Judge(in, tt.version)
		if j.Selectable != tt.selectable || j.ReasonCode != tt.reason || j.NotAllowedCode != tt.notAllowed || j.Allowed != (tt.notAllowed == "") {
			t.Errorf("%s: %+v, want selectable %v reason %q notAllowed %q", tt.name, j, tt.selectable, tt.reason, tt.notAllowed)
		}
		// Judge and Options agree on every version Options lists.
		for _, o := range Options(in).Options {
			if jo := Judge(in, o.Version); jo.Selectable != o.Selectable || jo.ReasonCode != o.ReasonCode {
				t.Errorf("%s: Judge(%s) = %+v, Options say selectable %v reason %q", tt.name, o.Version, jo, o.Selectable, o.ReasonCode)
			}
		}
	}
	if j := Judge(OptionsInput{Fleet: edge(), Releases: releases}, "0.162.0"); j.Target != (Target{Version: "0.161.0", Source: SourceGit}) {
		t.Errorf("target %+v, want the Git target", j.Target)
	}
}
