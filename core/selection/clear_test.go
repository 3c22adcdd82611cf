package selection

import (
	"reflect"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/rollout"
)

func clearIn(f *fleet.Fleet, s *Selection, reason string, members ...string) ClearInput {
	return ClearInput{Input: Input{FleetName: "edge", Fleet: f, Selection: s, Actor: "token:ci", MemberVersions: members, Now: t1}, Reason: reason}
}

func TestDecideClear_Outcomes(t *testing.T) {
	tests := []struct {
		name       string
		in         ClearInput
		wantStatus int
		wantCode   string
		wantDelete bool
		wantNoop   bool
		wantTarget Target
	}{
		{name: "cleared: Git target applies", in: clearIn(edge(), chosen("0.162.0"), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "cleared: no Git target", in: clearIn(edge(gitTarget("")), chosen("0.162.0", func(s *Selection) { s.GitVersion = "" }), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"", SourceNone}},
		{name: "clearing a hold", in: clearIn(edge(rangeFrame("<=0.161.0")), chosen("0.162.0", held), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "clearing a selection K2b is about to invalidate", in: clearIn(edge(rangeFrame("<=0.161.0")), chosen("0.162.0"), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "fleet missing", in: clearIn(nil, chosen("0.162.0"), ""), wantStatus: 404, wantCode: "fleet_not_found", wantDelete: false, wantNoop: false, wantTarget: Target{"", SourceNone}},
		{name: "reason too long", in: clearIn(edge(), chosen("0.162.0"), strings.Repeat("a", 501)), wantStatus: 400, wantCode: "request_invalid", wantDelete: false, wantNoop: false, wantTarget: Target{"0.162.0", SourceUI}},
		{name: "no selection: noop", in: clearIn(edge(), nil, ""), wantStatus: 200, wantCode: "", wantDelete: false, wantNoop: true, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "noop before reason_required", in: clearIn(edge(requireReason), nil, ""), wantStatus: 200, wantCode: "", wantDelete: false, wantNoop: true, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "superseded by Git, not yet deleted", in: clearIn(edge(gitTarget("0.163.0")), chosen("0.162.0"), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.163.0", SourceGit}}, // the operator's clear comes first
		{name: "frame disabled: allowed", in: clearIn(edge(disabled, requireReason), chosen("0.162.0"), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},         // not 412; a disabled frame requires no reason
		{name: "executor none: allowed", in: clearIn(edge(executorNone), chosen("0.162.0"), ""), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},
		{name: "reason required", in: clearIn(edge(requireReason), chosen("0.162.0"), " "), wantStatus: 422, wantCode: "selection_rejected", wantDelete: false, wantNoop: false, wantTarget: Target{"0.162.0", SourceUI}},
		{name: "reason given", in: clearIn(edge(requireReason), chosen("0.162.0"), "back to Git"), wantStatus: 200, wantCode: "", wantDelete: true, wantNoop: false, wantTarget: Target{"0.161.0", SourceGit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecideClear(tt.in)
			if got.Status != tt.wantStatus || got.Code != tt.wantCode || (got.Delete != nil) != tt.wantDelete || got.Noop != tt.wantNoop || got.Target != tt.wantTarget {
				t.Errorf("DecideClear = %d %q delete %v noop %v target %+v (%s)\nwant %d %q delete %v noop %v target %+v",
					got.Status, got.Code, got.Delete != nil, got.Noop, got.Target, got.Detail, tt.wantStatus, tt.wantCode, tt.wantDelete, tt.wantNoop, tt.wantTarget)
			}
			if got.Delete != nil && got.Delete != tt.in.Selection {
				t.Errorf("Delete is not the stored selection (its revision guards the delete)")
			}
			wantResult := "success"
			if tt.wantStatus != 200 {
				wantResult = "failure"
			}
			if a := got.Audit; a.Action != "fleet.version.clear" || a.Result != wantResult || a.Actor != "token:ci" || a.TargetID != "edge" || a.Details["noop"] != tt.wantNoop {
				t.Errorf("audit = %+v, want fleet.version.clear %s noop %v", a, wantResult, tt.wantNoop)
			}
		})
	}
}

// Clearing is the way out after a rollback, so a failed or rolling_back
// version rollout does not block it (it blocks only a new selection).
func TestDecideClear_NotBlockedByARollout(t *testing.T) {
	in := clearIn(edge(), chosen("0.162.0"), "")
	if got := DecideClear(in); got.Status != 200 || got.Delete == nil {
		t.Errorf("DecideClear = %d, want 200 and a delete", got.Status)
	}
	blocked := DecideSelect(SelectInput{Input: in.Input, Request: SelectRequest{Version: "0.163.0"}, Releases: releases,
		ActiveVersionRollout: &RolloutSummary{ID: "r1", Status: rollout.RollingBack}})
	if blocked.Status != 412 {
		t.Errorf("DecideSelect with a rolling_back rollout = %d, want 412", blocked.Status)
	}
}

func TestDecideClear_Audit(t *testing.T) {
	tests := []struct {
		name string
		in   ClearInput
		want audit.Entry
	}{
		{name: "cleared", in: clearIn(edge(), chosen("0.162.0"), "done"), want: audit.Entry{At: t1, Actor: "token:ci", Action: "fleet.version.clear", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "reason": "done", "gitVersion": "0.161.0", "noop": false}}},
		{name: "noop", in: clearIn(edge(), nil, ""), want: audit.Entry{At: t1, Actor: "token:ci", Action: "fleet.version.clear", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "", "reason": "", "gitVersion": "0.161.0", "noop": true}}},
		{name: "refused", in: clearIn(edge(requireReason), chosen("0.162.0"), ""), want: audit.Entry{At: t1, Actor: "token:ci", Action: "fleet.version.clear", TargetType: "fleet", TargetID: "edge", Result: "failure",
			Details: map[string]any{"version": "0.162.0", "reason": "", "gitVersion": "0.161.0", "noop": false, "code": "selection_rejected", "error": "update.selection.requireReason is set: a reason is required"}}},
		{name: "fleet missing", in: clearIn(nil, nil, ""), want: audit.Entry{At: t1, Actor: "token:ci", Action: "fleet.version.clear", TargetType: "fleet", TargetID: "edge", Result: "failure",
			Details: map[string]any{"version": "", "reason": "", "gitVersion": "", "noop": false, "code": "fleet_not_found", "error": "fleet edge does not exist"}}},
	}
	for _, tt := range tests {
		if got := DecideClear(tt.in).Audit; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: audit =\n%+v\nwant\n%+v", tt.name, got, tt.want)
		}
	}
}

func TestDecideClear_PossibleDowngrade(t *testing.T) {
	tests := []struct {
		name string
		in   ClearInput
		want bool
	}{
		{name: "Git target below the choice", in: clearIn(edge(), chosen("0.162.0"), "", "0.161.0"), want: true},
		{name: "Git target above the choice", in: clearIn(edge(rangeFrame(">=0.150.0"), allowDowngrade), chosen("0.155.0"), "", "0.155.0"), want: false},
		{name: "hold: Git target below a member", in: clearIn(edge(rangeFrame("<=0.161.0")), chosen("0.163.0", held), "", "0.163.0"), want: true},
		{name: "hold: members on the Git target", in: clearIn(edge(rangeFrame("<=0.161.0")), chosen("0.163.0", held), "", "0.161.0"), want: false}, // the held version never rolled out
		{name: "no Git target: nothing rolls out", in: clearIn(edge(gitTarget("")), chosen("0.162.0", func(s *Selection) { s.GitVersion = "" }), "", "0.162.0"), want: false},
	}
	for _, tt := range tests {
		if got := DecideClear(tt.in).PossibleDowngrade; got != tt.want {
			t.Errorf("%s: PossibleDowngrade = %v, want %v", tt.name, got, tt.want)
		}
	}
}
