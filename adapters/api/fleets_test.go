package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

func TestGetFleet_StatusWithTheEffectiveTarget(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	rep := h.do(get("/api/v1/fleets/edge", RoleViewer))
	wantOK(t, rep)
	v := decode[schema.Fleet](t, rep)
	if v.VersionTarget != (selection.Target{Version: "0.161.0", Source: selection.SourceGit}) {
		t.Errorf("versionTarget %+v, want 0.161.0 from git", v.VersionTarget)
	}
	if v.Agents != (schema.AgentCounts{Total: 4, Online: 4, OnTargetVersion: 4, OnConfigHash: 0}) {
		t.Errorf("agents %+v, want 4 online on the target version, none on the new configuration", v.Agents)
	}
	if len(v.ActiveRollouts) != 1 || v.ActiveRollouts[0].ID != id || v.ActiveRollouts[0].Kind != policy.KindConfig {
		t.Errorf("active rollouts %+v, want the configuration rollout %s", v.ActiveRollouts, id)
	}
	if v.Commit != "9f3c2a17" || v.ConfigPolicy != "canary-then-all" || v.VersionPolicy != "default" || !v.Selection.Enabled || v.ConfigHash == "" {
		t.Errorf("fleet %+v", v)
	}
	wantProblem(t, h.do(get("/api/v1/fleets/nope", RoleViewer)), http.StatusNotFound, CodeFleetNotFound)
}

func TestListFleets_ByNameAndPaged(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	all := decode[page.Page[schema.Fleet]](t, h.do(get("/api/v1/fleets", RoleViewer)))
	if len(all.Items) != 2 || all.Items[0].Name != "core" || all.Items[1].Name != "edge" || all.Next != "" {
		t.Fatalf("fleets %+v", all)
	}
	if all.Items[0].VersionTarget.Source != selection.SourceGit {
		t.Errorf("core target %+v, want from git", all.Items[0].VersionTarget)
	}
	p1 := decode[page.Page[schema.Fleet]](t, h.do(get("/api/v1/fleets?limit=1", RoleViewer)))
	p2 := decode[page.Page[schema.Fleet]](t, h.do(get("/api/v1/fleets?limit=1&pageToken="+p1.Next, RoleViewer)))
	if len(p1.Items) != 1 || p1.Items[0].Name != "core" || len(p2.Items) != 1 || p2.Items[0].Name != "edge" || p2.Next != "" {
		t.Errorf("pages %+v | %+v", p1, p2)
	}
}

func TestVersionOptions_InsideTheFrameNewestFirst(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	v := decode[schema.VersionOptions](t, h.do(get("/api/v1/fleets/edge/version-options", RoleViewer)))
	if !v.Allowed || v.Target.Version != "0.161.0" || len(v.Platforms) != 2 || v.Executor != "manual" {
		t.Fatalf("options %+v", v)
	}
	if len(v.Options) != 2 || v.Options[0].Version != "0.162.0" || !v.Options[0].Selectable ||
		v.Options[1].Version != "0.161.0" || v.Options[1].ReasonCode != selection.ReasonCurrentTarget {
		t.Errorf("options %+v, want 0.162.0 selectable, then 0.161.0 the current target", v.Options)
	}
	core := decode[schema.VersionOptions](t, h.do(get("/api/v1/fleets/core/version-options", RoleViewer)))
	if core.Allowed || core.NotAllowedCode != selection.NotAllowedSelectionDisabled || len(core.Options) != 1 {
		t.Errorf("core options %+v, want not allowed (selection_disabled) with only the Git target", core)
	}
	wantProblem(t, h.do(get("/api/v1/fleets/nope/version-options", RoleViewer)), http.StatusNotFound, CodeFleetNotFound)
}

func TestSelectVersion_StoresAuditsAndPlans(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	rep := h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator,
		`{"version": "v0.162.0", "reason": "CVE fix", "expectedTargetVersion": "0.161.0"}`))
	wantOK(t, rep)
	v := decode[selectResponse](t, rep)
	if !v.Planned || v.RolloutID == "" || v.Targets != 4 || v.Target != (selection.Target{Version: "0.162.0", Source: selection.SourceUI}) {
		t.Fatalf("answer %+v, want planned with a rollout of 4 targets to 0.162.0 (ui)", v)
	}
	r := h.rollout(v.RolloutID)
	if r.Origin != rollout.OriginUI || r.CreatedBy != operator.Actor || r.RequestReason != "CVE fix" || r.ToRef != "0.162.0" {
		t.Errorf("rollout origin %s by %s (%q) to %s", r.Origin, r.CreatedBy, r.RequestReason, r.ToRef)
	}
	sel, _ := h.store.Selection(context.Background(), "edge")
	if sel == nil || sel.SelectedBy != operator.Actor || sel.PlannedAt == nil || sel.RolloutID != v.RolloutID {
		t.Errorf("stored selection %+v", sel)
	}
	e := auditOf(h, "fleet", "edge", audit.ActionVersionSelect)
	if e.Result != audit.ResultSuccess || e.Actor != operator.Actor || e.Details["rolloutId"] != v.RolloutID || e.Details["noop"] != false {
		t.Errorf("audit %+v", e)
	}
	f := decode[schema.Fleet](t, h.do(get("/api/v1/fleets/edge", RoleViewer)))
	if f.UISelection == nil || f.UISelection.SelectedBy != "Dana Operator" || f.VersionTarget.Source != selection.SourceUI {
		t.Errorf("fleet after the choice: %+v %+v", f.UISelection, f.VersionTarget)
	}
}

func TestSelectVersion_TheCurrentTargetIsANoop(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	before := h.store.snapshot()
	v := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.161.0"}`)))
	if v.Planned || v.RolloutID != "" || v.Message == "" {
		t.Errorf("noop answer %+v, want planned false with a message", v)
	}
	if h.store.snapshot() != before {
		t.Errorf("a noop changed the store")
	}
	if e := auditOf(h, "fleet", "edge", audit.ActionVersionSelect); e.Details["noop"] != true || e.Result != audit.ResultSuccess {
		t.Errorf("audit %+v, want a success with noop true", e)
	}
}

func TestSelectVersion_RefusalsInTheSpecsOrder(t *testing.T) {
	cases := []struct {
		name, fleet, body string
		setup             func(h *harness)
		status            int
		code, issue       string
		audited           bool
	}{
		{name: "fleet missing", fleet: "nope", body: `{"version": "0.162.0"}`, setup: nil, status: 404, code: CodeFleetNotFound, issue: "", audited: false}, // no fleet to audit it on
		{name: "fleet missing, version not semver", fleet: "nope", body: `{"version": "latest"}`, setup: nil, status: 404, code: CodeFleetNotFound, issue: "", audited: false},
		{name: "body not an object", fleet: "edge", body: `null`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: false},              // nothing says what was attempted
		{name: "body malformed", fleet: "edge", body: `{"version": "0.162.0"`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: false}, // the same
		{name: "version missing", fleet: "edge", body: `{}`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: true},                    // an attempt without a version
		{name: "version empty", fleet: "edge", body: `{"version": ""}`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: true},
		{name: "version not semver", fleet: "edge", body: `{"version": "latest"}`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: true},
		{name: "reason over 500 characters", fleet: "edge", body: `{"version": "0.162.0", "reason": "` + strings.Repeat("x", 501) + `"}`, setup: nil, status: 400, code: CodeRequestInvalid, issue: "", audited: true},
		{name: "frame disabled", fleet: "core", body: `{"version": "0.162.0"}`, setup: nil, status: 412, code: selection.NotAllowedSelectionDisabled, issue: "", audited: true},
		{name: "failed version rollout", fleet: "edge", body: `{"version": "0.162.0"}`, setup: failedVersionRollout, status: 412, code: selection.NotAllowedBlockingRollout, issue: "", audited: true},
		{name: "someone else changed it", fleet: "edge", body: `{"version": "0.162.0", "expectedTargetVersion": "0.160.0"}`, setup: nil, status: 409, code: CodeTargetChanged, issue: "", audited: true},
		{name: "outside the frame", fleet: "edge", body: `{"version": "0.170.0"}`, setup: nil, status: 422, code: CodeSelectionRejected, issue: selection.IssueVersionNotAllowed, audited: true},
		{name: "unknown release", fleet: "edge", body: `{"version": "0.161.5"}`, setup: nil, status: 422, code: CodeSelectionRejected, issue: selection.IssueUnknownVersion, audited: true},
		{name: "downgrade", fleet: "edge", body: `{"version": "0.160.0"}`, setup: widenFrame, status: 422, code: CodeSelectionRejected, issue: selection.IssueDowngradeNotAllowed, audited: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.applyFixture()
			if c.setup != nil {
				c.setup(h)
			}
			before, audits := h.store.snapshot(), h.store.auditLen()
			p := wantProblem(t, h.do(post("/api/v1/fleets/"+c.fleet+"/actions/select-version", RoleOperator, c.body)), c.status, c.code)
			if h.store.snapshot() != before {
				t.Errorf("a refusal changed the store")
			}
			if got := h.store.auditLen() - audits; (got == 1) != c.audited {
				t.Errorf("%d audit entries, audited %v", got, c.audited)
			}
			if c.audited {
				e := h.store.lastAudit()
				if e.Action != audit.ActionVersionSelect || e.Result != audit.ResultFailure || e.Details["code"] != c.code ||
					e.Details["error"] != p.Detail || e.TargetType != audit.TargetFleet || e.TargetID != c.fleet || e.Actor != operator.Actor {
					t.Errorf("audit %+v, want a failed fleet.version.select of fleet %s with code %s and the detail as error", e, c.fleet, c.code)
				}
			}
			if c.issue != "" && (len(p.Issues) != 1 || p.Issues[0].Code != c.issue) {
				t.Errorf("issues %+v, want %s", p.Issues, c.issue)
			}
		})
	}
}

func failedVersionRollout(h *harness) {
	r := seedVersionRollout(h, "v-failed")
	r.Status = rollout.Failed
	h.store.Rollouts[r.ID] = r
}

// widenFrame lets 0.160.0 into the frame, so that only the downgrade rule refuses it.
func widenFrame(h *harness) {
	f := h.store.FleetsByName["edge"]
	f.Update.Selection.VersionRange = ">=0.160.0, <=0.162.0"
	h.store.FleetsByName["edge"] = f
}

// blockingPlanning never finishes while the test runs.
type blockingPlanning struct{ release chan struct{} }

func (b blockingPlanning) PlanFleet(ctx context.Context, _ string, _ policy.Kind) (plannertask.Reply, error) {
	<-b.release
	return plannertask.Reply{}, nil
}

func TestSelectVersion_PlannedFalseWhenThePlannerIsLate(t *testing.T) {
	slow := blockingPlanning{release: make(chan struct{})}
	defer close(slow.release)
	h := newHarness(t, func(d *Deps) { d.Planning, d.PlanTimeout = slow, time.Millisecond })
	h.seedAgents()
	if err := h.store.PutRevision(context.Background(), mustLoad(t, fixtureFiles()), t0); err != nil {
		t.Fatal(err)
	}
	v := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`)))
	if v.Planned || v.RolloutID != "" || v.Target.Version != "0.162.0" {
		t.Errorf("answer %+v, want the stored choice with planned false", v)
	}
	if sel, _ := h.store.Selection(context.Background(), "edge"); sel == nil || sel.Version != "0.162.0" {
		t.Errorf("selection %+v, want 0.162.0 stored", sel)
	}
}

func TestSelectVersion_LostRacesAre409Conflict(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	h.store.Fail("SaveSelection", rollout.ErrConflict)
	wantProblem(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`)), http.StatusConflict, CodeConflict)
	if e := h.store.lastAudit(); e.Action != audit.ActionVersionSelect || e.Result != audit.ResultFailure || e.Details["code"] != CodeConflict {
		t.Errorf("audit %+v, want a failed select with code conflict", e)
	}
}

func TestClearVersionSelection_GitTargetAppliesAgain(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	uiRollout := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`))).RolloutID
	rep := h.do(post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, `{"reason": "back to Git"}`))
	wantOK(t, rep)
	v := decode[clearResponse](t, rep)
	if v.Target != (selection.Target{Version: "0.161.0", Source: selection.SourceGit}) || !v.PossibleDowngrade {
		t.Errorf("answer %+v, want 0.161.0 from git with a possible downgrade", v)
	}
	if sel, _ := h.store.Selection(context.Background(), "edge"); sel != nil {
		t.Errorf("selection %+v left", sel)
	}
	if st := h.rollout(uiRollout).Status; st != rollout.Superseded {
		t.Errorf("the UI rollout is %s, want superseded by the planner", st)
	}
	if e := auditOf(h, "fleet", "edge", audit.ActionVersionClear); e.Result != audit.ResultSuccess || e.Details["version"] != "0.162.0" || e.Details["reason"] != "back to Git" {
		t.Errorf("audit %+v", e)
	}
}

func TestClearVersionSelection_NoSelectionIsANoopWithoutBody(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	before := h.store.snapshot()
	r := post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, "")
	v := decode[clearResponse](t, h.do(r))
	if v.Target.Version != "0.161.0" || h.store.snapshot() != before {
		t.Errorf("noop clear answered %+v or changed the store", v)
	}
	if e := auditOf(h, "fleet", "edge", audit.ActionVersionClear); e.Details["noop"] != true {
		t.Errorf("audit %+v, want noop true", e)
	}
}

func TestClearVersionSelection_ReasonRequiredIs422(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	f := h.store.FleetsByName["edge"]
	f.Update.Selection.RequireReason = true
	h.store.FleetsByName["edge"] = f
	h.store.Selections["edge"] = selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0",
		SelectedBy: operator.Actor, SelectedAt: t0, UpdatedAt: t0, Revision: 1}
	before := h.store.snapshot()
	p := wantProblem(t, h.do(post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, `{}`)), 422, CodeSelectionRejected)
	if len(p.Issues) != 1 || p.Issues[0].Code != selection.IssueReasonRequired || h.store.snapshot() != before {
		t.Errorf("issues %+v (or the store changed), want reason_required", p.Issues)
	}
	if e := h.store.lastAudit(); e.Action != audit.ActionVersionClear || e.Result != audit.ResultFailure {
		t.Errorf("audit %+v, want a failed clear", e)
	}
	wantProblem(t, h.do(post("/api/v1/fleets/nope/actions/clear-version-selection", RoleOperator, "")), http.StatusNotFound, CodeFleetNotFound)
}

// TestClearVersionSelection_RefusalsAreAuditedButA404 is the audit rule of
// select for clear: every decided refusal is a failed fleet.version.clear
// with the problem in details; a missing fleet and a body that cannot be
// read as the request are not audited.
func TestClearVersionSelection_RefusalsAreAuditedButA404(t *testing.T) {
	cases := []struct {
		name, fleet, body string
		status            int
		code              string
		audited           bool
	}{
		{name: "fleet missing", fleet: "nope", body: `{"reason": "back to Git"}`, status: 404, code: CodeFleetNotFound, audited: false},
		{name: "fleet missing, reason over 500 characters", fleet: "nope", body: `{"reason": "` + strings.Repeat("x", 501) + `"}`, status: 404, code: CodeFleetNotFound, audited: false},
		{name: "body not an object", fleet: "edge", body: `null`, status: 400, code: CodeRequestInvalid, audited: false},
		{name: "body malformed", fleet: "edge", body: `{"reason": `, status: 400, code: CodeRequestInvalid, audited: false},
		{name: "unknown field", fleet: "edge", body: `{"reason": "x", "force": true}`, status: 400, code: CodeRequestInvalid, audited: false},
		{name: "reason over 500 characters", fleet: "edge", body: `{"reason": "` + strings.Repeat("x", 501) + `"}`, status: 400, code: CodeRequestInvalid, audited: true},
		{name: "reason required", fleet: "edge", body: `{}`, status: 422, code: CodeSelectionRejected, audited: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.applyFixture()
			f := h.store.FleetsByName["edge"]
			f.Update.Selection.RequireReason = true
			h.store.FleetsByName["edge"] = f
			h.store.Selections["edge"] = selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0",
				SelectedBy: operator.Actor, SelectedAt: t0, UpdatedAt: t0, Revision: 1}
			before, audits := h.store.snapshot(), h.store.auditLen()
			p := wantProblem(t, h.do(post("/api/v1/fleets/"+c.fleet+"/actions/clear-version-selection", RoleOperator, c.body)), c.status, c.code)
			if h.store.snapshot() != before {
				t.Errorf("a refusal changed the store")
			}
			if got := h.store.auditLen() - audits; (got == 1) != c.audited {
				t.Fatalf("%d audit entries, audited %v", got, c.audited)
			}
			if !c.audited {
				return
			}
			e := h.store.lastAudit()
			if e.Action != audit.ActionVersionClear || e.Result != audit.ResultFailure || e.Details["code"] != c.code ||
				e.Details["error"] != p.Detail || e.Details["version"] != "0.162.0" || e.TargetID != "edge" {
				t.Errorf("audit %+v, want a failed fleet.version.clear of 0.162.0 with code %s and the detail as error", e, c.code)
			}
		})
	}
}

// TestSelectVersion_RefusedValuesAreAuditedClipped: a 400 may be about a
// value's length, and the body may be 1 MiB; the audit entry keeps the
// first 500 characters and says how long the value was.
func TestSelectVersion_RefusedValuesAreAuditedClipped(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	reason := strings.Repeat("x", 200000)
	wantProblem(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0", "reason": "`+reason+`"}`)),
		http.StatusBadRequest, CodeRequestInvalid)
	e := h.store.lastAudit()
	got, _ := e.Details["reason"].(string)
	if e.Result != audit.ResultFailure || !strings.HasPrefix(got, strings.Repeat("x", 500)+"…") || !strings.Contains(got, "200000 characters") {
		t.Errorf("audited reason of %d characters (%.40q…), want 500 and the length", len(got), got)
	}
	if e.Details["version"] != "0.162.0" {
		t.Errorf("audited version %v, want 0.162.0", e.Details["version"])
	}

	version := strings.Repeat("9", 100000) // not a semantic version either: the error quotes it
	wantProblem(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "`+version+`"}`)),
		http.StatusBadRequest, CodeRequestInvalid)
	e = h.store.lastAudit()
	for _, k := range []string{"version", "error"} {
		if got, _ := e.Details[k].(string); len(got) > 600 || !strings.Contains(got, "characters)") {
			t.Errorf("audited %s of %d characters (%.40q…), want 500 and the length", k, len(got), got)
		}
	}
}

// auditOf is the newest entry of an action on an object, read through the API.
func auditOf(h *harness, typ, id, action string) auditView {
	h.t.Helper()
	pg := decode[page.Page[auditView]](h.t, h.do(get("/api/v1/audit?targetType="+typ+"&targetId="+id, RoleViewer)))
	for _, e := range pg.Items {
		if e.Action == action {
			return e
		}
	}
	h.t.Fatalf("no %s entry for %s %s", action, typ, id)
	return auditView{}
}

func TestPlanning_StartsTheCreatedRolloutAndWakesTheSupersededOne(t *testing.T) {
	h := newHarness(t)
	config := h.applyFixture()
	ui := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`))).RolloutID
	if got := h.sfn.startedNames(); join(got) != config+","+ui {
		t.Errorf("executions started %v, want one per created rollout: %s,%s", got, config, ui)
	}
	h.park(ui, "tok-ui") // parked, say, for approval
	wantOK(t, h.do(post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, "")))
	if st := h.rollout(ui).Status; st != rollout.Superseded {
		t.Fatalf("the UI rollout is %s, want superseded", st)
	}
	if got := h.sfn.wokenTokens(); join(got) != "tok-ui" || h.rollout(ui).TaskToken != "" {
		t.Errorf("woken %v, token %q; want the superseded rollout's execution woken and its token cleared", got, h.rollout(ui).TaskToken)
	}
}

func TestPlanning_CancelsTheStartedUpdatesOfASupersededRollout(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	f := h.store.FleetsByName["edge"]
	f.Update.Executor = "updater"
	h.store.FleetsByName["edge"] = f
	ui := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`))).RolloutID
	// The planner does not record the fleet's executor on the rollouts it
	// creates (engine.NewRollout has no field for it); set it as it should.
	r := h.store.Rollouts[ui]
	r.Executor = "updater"
	h.store.Rollouts[ui] = r
	h.pass(ui) // starts the targets: the updater offers 0.162.0
	if offer := h.store.Agents["e2"].PackageOffer; offer != "0.162.0" {
		t.Fatalf("e2 offer %q, want 0.162.0 once started", offer)
	}
	wantOK(t, h.do(post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, "")))
	if offer := h.store.Agents["e2"].PackageOffer; offer != "" {
		t.Errorf("e2 offer %q after the supersede, want it withdrawn (executor Cancel)", offer)
	}
}
