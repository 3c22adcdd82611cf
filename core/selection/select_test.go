package selection

import (
	"reflect"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/rollout"
)

func selectIn(f *fleet.Fleet, s *Selection, req SelectRequest) SelectInput {
	return SelectInput{
		Input:     Input{FleetName: "edge", Fleet: f, Selection: s, Actor: "user:bob", MemberVersions: []string{"0.161.0"}, Now: t1},
		Request:   req,
		GitCommit: "c2",
		Releases:  releases,
	}
}

func TestDecideSelect_Outcomes(t *testing.T) {
	failed := &RolloutSummary{ID: "r1", Status: rollout.Failed}
	tests := []struct {
		name       string
		in         SelectInput
		wantStatus int
		wantCode   string   // problem code; "" for 200
		wantIssues []string // issue codes of a 422
		wantStore  bool
	}{
		{name: "selected", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "selected with leading v", in: selectIn(edge(), nil, SelectRequest{Version: "v0.162.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "fleet missing", in: selectIn(nil, nil, SelectRequest{Version: "0.162.0"}), wantStatus: 404, wantCode: "fleet_not_found", wantIssues: nil, wantStore: false},
		{name: "404 before 400", in: selectIn(nil, nil, SelectRequest{}), wantStatus: 404, wantCode: "fleet_not_found", wantIssues: nil, wantStore: false},
		{name: "version empty", in: selectIn(edge(), nil, SelectRequest{}), wantStatus: 400, wantCode: "request_invalid", wantIssues: nil, wantStore: false},
		{name: "version not semver", in: selectIn(edge(), nil, SelectRequest{Version: "latest"}), wantStatus: 400, wantCode: "request_invalid", wantIssues: nil, wantStore: false},
		{name: "reason too long", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", Reason: strings.Repeat("é", 501)}), wantStatus: 400, wantCode: "request_invalid", wantIssues: nil, wantStore: false},
		{name: "reason of 500 characters", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", Reason: strings.Repeat("é", 500)}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true}, // characters, not bytes
		{name: "400 before 412", in: selectIn(edge(disabled), nil, SelectRequest{}), wantStatus: 400, wantCode: "request_invalid", wantIssues: nil, wantStore: false},
		{name: "frame disabled", in: selectIn(edge(disabled), nil, SelectRequest{Version: "0.162.0"}), wantStatus: 412, wantCode: "selection_disabled", wantIssues: nil, wantStore: false},
		{name: "block missing", in: selectIn(edge(noBlock), nil, SelectRequest{Version: "0.162.0"}), wantStatus: 412, wantCode: "selection_disabled", wantIssues: nil, wantStore: false},
		{name: "executor none", in: selectIn(edge(executorNone), nil, SelectRequest{Version: "0.162.0"}), wantStatus: 412, wantCode: "no_executor", wantIssues: nil, wantStore: false},
		{name: "rollout failed", in: withRollout(selectIn(edge(), nil, SelectRequest{Version: "0.162.0"}), failed), wantStatus: 412, wantCode: "blocking_rollout", wantIssues: nil, wantStore: false},
		{name: "rollout rolling_back", in: withRollout(selectIn(edge(), nil, SelectRequest{Version: "0.162.0"}), &RolloutSummary{ID: "r1", Status: rollout.RollingBack}), wantStatus: 412, wantCode: "blocking_rollout", wantIssues: nil, wantStore: false},
		{name: "412 before 409", in: selectIn(edge(disabled), nil, SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("0.1.0")}), wantStatus: 412, wantCode: "selection_disabled", wantIssues: nil, wantStore: false},
		{name: "expected target differs", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("0.160.0")}), wantStatus: 409, wantCode: "target_changed", wantIssues: nil, wantStore: false},
		{name: "expected no target, there is one", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("")}), wantStatus: 409, wantCode: "target_changed", wantIssues: nil, wantStore: false},
		{name: "expected no target, hold", in: selectIn(edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("")}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "expected target matches", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("v0.161.0")}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "409 before 422", in: selectIn(edge(), nil, SelectRequest{Version: "0.170.0", ExpectedTargetVersion: str("0.160.0")}), wantStatus: 409, wantCode: "target_changed", wantIssues: nil, wantStore: false},
		{name: "noop: already the Git target", in: selectIn(edge(), nil, SelectRequest{Version: "0.161.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: false},
		{name: "noop before 422 reason_required", in: selectIn(edge(requireReason), nil, SelectRequest{Version: "0.161.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: false},
		{name: "outside the frame", in: selectIn(edge(), nil, SelectRequest{Version: "0.164.0"}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"version_not_allowed"}, wantStore: false},
		{name: "unknown version", in: selectIn(edge(rangeFrame(">=0.161.0")), nil, SelectRequest{Version: "0.170.0"}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"unknown_version"}, wantStore: false},
		{name: "prerelease", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.1-rc.1"}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"prerelease_not_allowed"}, wantStore: false},
		{name: "downgrade", in: selectIn(edge(rangeFrame(">=0.159.0")), nil, SelectRequest{Version: "0.160.0"}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"downgrade_not_allowed"}, wantStore: false},
		{name: "downgrade allowed", in: selectIn(edge(rangeFrame(">=0.159.0"), allowDowngrade), nil, SelectRequest{Version: "0.160.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "reason required", in: selectIn(edge(requireReason), nil, SelectRequest{Version: "0.162.0", Reason: "  "}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"reason_required"}, wantStore: false},
		{name: "reason given", in: selectIn(edge(requireReason), nil, SelectRequest{Version: "0.162.0", Reason: "CVE"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "version issue and reason", in: selectIn(edge(requireReason), nil, SelectRequest{Version: "0.164.0"}), wantStatus: 422, wantCode: "selection_rejected", wantIssues: []string{"version_not_allowed", "reason_required"}, wantStore: false},
		{name: "new choice during a hold", in: selectIn(edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.162.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true},
		{name: "superseded choice is not the target", in: selectIn(edge(gitTarget("0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.163.0"}), wantStatus: 200, wantCode: "", wantIssues: nil, wantStore: true}, // K1 already took it back
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecideSelect(tt.in)
			var codes []string
			for _, is := range got.Issues {
				codes = append(codes, is.Code)
			}
			if got.Status != tt.wantStatus || got.Code != tt.wantCode || !reflect.DeepEqual(codes, tt.wantIssues) || (got.Store != nil) != tt.wantStore {
				t.Errorf("DecideSelect = %d %q %v store %v (%s)\nwant %d %q %v store %v", got.Status, got.Code, codes, got.Store != nil, got.Detail, tt.wantStatus, tt.wantCode, tt.wantIssues, tt.wantStore)
			}
			wantResult := "success"
			if tt.wantStatus != 200 {
				wantResult = "failure"
			}
			if a := got.Audit; a.Action != "fleet.version.select" || a.Result != wantResult || a.Actor != "user:bob" || a.TargetType != "fleet" || a.TargetID != "edge" || !a.At.Equal(t1) {
				t.Errorf("audit = %+v, want fleet.version.select with result %s", a, wantResult)
			}
			if tt.wantStatus != 200 && (got.Detail == "" || got.Audit.Details["error"] != got.Detail || got.Audit.Details["code"] != got.Code) {
				t.Errorf("refusal without detail in the problem and details.error: %q %+v", got.Detail, got.Audit.Details)
			}
		})
	}
}

func withRollout(in SelectInput, r *RolloutSummary) SelectInput {
	in.ActiveVersionRollout = r
	return in
}

func TestDecideSelect_Stored(t *testing.T) {
	got := DecideSelect(selectIn(edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.162.0", Reason: " CVE-2026-1 "}))
	want := &Selection{Fleet: "edge", Version: "0.162.0", State: Active, GitVersion: "0.161.0", GitCommit: "c2",
		SelectedBy: "user:bob", SelectedAt: t1, Reason: "CVE-2026-1", UpdatedAt: t1, Revision: 4} // one above the stored revision
	if !reflect.DeepEqual(got.Store, want) {
		t.Errorf("Store =\n%+v\nwant\n%+v", got.Store, want)
	}
	if got.Target != (Target{"0.162.0", SourceUI}) || got.Noop || got.Message != "version 0.162.0 selected for fleet edge" {
		t.Errorf("target %+v noop %v message %q", got.Target, got.Noop, got.Message)
	}
	wantDetails := map[string]any{"version": "0.162.0", "reason": "CVE-2026-1", "previousVersion": "", "previousSource": "hold",
		"gitVersion": "0.161.0", "gitCommit": "c2", "noop": false}
	if !reflect.DeepEqual(got.Audit.Details, wantDetails) {
		t.Errorf("details = %+v\nwant %+v", got.Audit.Details, wantDetails)
	}
	if first := DecideSelect(selectIn(edge(), nil, SelectRequest{Version: "0.162.0"})); first.Store.Revision != 1 {
		t.Errorf("first selection revision = %d, want 1", first.Store.Revision)
	}
}

func TestDecideSelect_NoopIsAudited(t *testing.T) {
	s := chosen("0.162.0", func(s *Selection) { s.RolloutID = "r9" })
	got := DecideSelect(selectIn(edge(), s, SelectRequest{Version: "0.162.0", Reason: "again"}))
	wantDetails := map[string]any{"version": "0.162.0", "reason": "again", "previousVersion": "0.162.0", "previousSource": "ui",
		"gitVersion": "0.161.0", "gitCommit": "c2", "noop": true, "rolloutId": "r9"}
	if got.Status != 200 || !got.Noop || got.Store != nil || got.Audit.Result != "success" || !reflect.DeepEqual(got.Audit.Details, wantDetails) {
		t.Errorf("noop = %d noop %v store %v audit %+v", got.Status, got.Noop, got.Store, got.Audit)
	}
	if got.Message != "version 0.162.0 is already the effective target of fleet edge (source ui); nothing changed" {
		t.Errorf("message = %q", got.Message)
	}
}

func TestDecideSelect_RefusalIsAudited(t *testing.T) {
	got := DecideSelect(withRollout(selectIn(edge(), nil, SelectRequest{Version: "0.162.0", Reason: "x"}), &RolloutSummary{ID: "r1", Status: rollout.Failed}))
	want := audit.Entry{At: t1, Actor: "user:bob", Action: "fleet.version.select", TargetType: "fleet", TargetID: "edge", Result: "failure",
		Details: map[string]any{"version": "0.162.0", "reason": "x", "previousVersion": "0.161.0", "previousSource": "git", "gitVersion": "0.161.0", "gitCommit": "c2", "noop": false,
			"error": "version rollout r1 of fleet edge is failed; abort it first", "code": "blocking_rollout"}}
	if !reflect.DeepEqual(got.Audit, want) || got.Target != (Target{"0.161.0", SourceGit}) {
		t.Errorf("audit =\n%+v\nwant\n%+v", got.Audit, want)
	}
}

func TestDecideSelect_Messages(t *testing.T) {
	tests := []struct {
		name string
		in   SelectInput
		want string // the problem detail
	}{
		{name: "404", in: selectIn(nil, nil, SelectRequest{Version: "0.162.0"}), want: "fleet edge does not exist"},
		{name: "400 empty", in: selectIn(edge(), nil, SelectRequest{}), want: "version is required"},
		{name: "400 not semver", in: selectIn(edge(), nil, SelectRequest{Version: "0.162"}), want: `version "0.162" is not a semantic version`},
		{name: "400 reason", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", Reason: strings.Repeat("a", 501)}), want: "reason has 501 characters, more than 500"},
		{name: "412 disabled", in: selectIn(edge(disabled), nil, SelectRequest{Version: "0.162.0"}), want: "fleet edge does not let operators choose the version: update.selection is not enabled"},
		{name: "412 no executor", in: selectIn(edge(executorNone), nil, SelectRequest{Version: "0.162.0"}), want: "fleet edge has no update executor (update.executor is none)"},
		{name: "409", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("")}), want: "the effective target of fleet edge is 0.161.0 (source git), but the request expected no target; someone else changed it"},
		{name: "409 hold", in: selectIn(edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.162.0", ExpectedTargetVersion: str("0.163.0")}), want: "the effective target of fleet edge is no target (source hold), but the request expected 0.163.0; someone else changed it"},
		{name: "422 outside", in: selectIn(edge(), nil, SelectRequest{Version: "0.164.0"}), want: `version 0.164.0 is outside update.selection (versionRange ">=0.161.0, <=0.163.0")`},
		{name: "422 unknown", in: selectIn(edge(rangeFrame(">=0.161.0")), nil, SelectRequest{Version: "0.170.0"}), want: "version 0.170.0 is not a known release"},
		{name: "422 prerelease", in: selectIn(edge(), nil, SelectRequest{Version: "0.162.1-rc.1"}), want: `version 0.162.1-rc.1 is a prerelease, which update.selection (versionRange ">=0.161.0, <=0.163.0") does not admit`},
		{name: "422 downgrade", in: selectIn(edge(rangeFrame(">=0.159.0")), nil, SelectRequest{Version: "0.160.0"}), want: "version 0.160.0 is lower than 0.161.0, the current target, and update.selection.allowDowngrade is false"},
		{name: "422 downgrade in hold", in: memberVersions(selectIn(edge(rangeFrame("<=0.162.0")), chosen("0.163.0"), SelectRequest{Version: "0.160.0"}), "0.163.0"), want: "version 0.160.0 is lower than 0.163.0, the highest version among the fleet members, and update.selection.allowDowngrade is false"},
		{name: "422 two issues", in: selectIn(edge(requireReason), nil, SelectRequest{Version: "0.164.0"}), want: `version 0.164.0 is outside update.selection (versionRange ">=0.161.0, <=0.163.0"); update.selection.requireReason is set: a reason is required`},
	}
	for _, tt := range tests {
		if got := DecideSelect(tt.in); got.Detail != tt.want {
			t.Errorf("%s: detail = %q\nwant %q", tt.name, got.Detail, tt.want)
		}
	}
	got := DecideSelect(selectIn(edge(requireReason), nil, SelectRequest{Version: "0.162.0"}))
	want := issue.List{{Code: "reason_required", Severity: issue.Error, Path: "reason", Message: "update.selection.requireReason is set: a reason is required"}}
	if !reflect.DeepEqual(got.Issues, want) {
		t.Errorf("issues = %v, want %v", got.Issues, want)
	}
}

func memberVersions(in SelectInput, vs ...string) SelectInput { in.MemberVersions = vs; return in }
