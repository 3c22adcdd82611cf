package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/installplan"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

func (h *harness) installPlan(fleet string) (schema.InstallPlan, reply) {
	h.t.Helper()
	rep := h.do(get("/api/v1/fleets/"+fleet+"/install-plan", RoleViewer))
	wantOK(h.t, rep)
	return decode[schema.InstallPlan](h.t, rep), rep
}

func (h *harness) setSelection(fleet string, s selection.Selection) {
	h.store.Lock()
	defer h.store.Unlock()
	h.store.Selections[fleet] = s
}

func TestInstallPlan_TheEffectiveTarget(t *testing.T) {
	h := newHarness(t)
	h.applyFixture() // the planner wrote 0.161.0 to every member
	p, rep := h.installPlan("edge")
	want := schema.InstallPlan{Fleet: "edge", Ready: true, Version: "0.161.0", Distribution: "otelcol-contrib", Source: installplan.SourceGit,
		Target: selection.Target{Version: "0.161.0", Source: selection.SourceGit}, Detail: p.Detail}
	if p != want || rep.header.Get("Retry-After") != "" {
		t.Errorf("plan %+v, want %+v", p, want)
	}
	// core's executor is none: no rollout ever, but a target to install.
	if p, _ := h.installPlan("core"); !p.Ready || p.Version != "0.161.0" {
		t.Errorf("core %+v", p)
	}
}

func TestInstallPlan_TheFromVersionWhileTheVersionRolloutRuns(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	rep := h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`))
	wantOK(t, rep)
	sel := decode[selectResponse](t, rep)
	if sel.RolloutID == "" {
		t.Fatalf("no version rollout: %s", rep.body)
	}
	r, _ := h.store.GetRollout(context.Background(), sel.RolloutID)
	if r.Status != rollout.Pending {
		t.Fatalf("rollout %s, want pending", r.Status)
	}
	p, _ := h.installPlan("edge")
	if !p.Ready || p.Version != "0.161.0" || p.Source != installplan.SourceRollout || p.RolloutID != sel.RolloutID ||
		p.Target != (selection.Target{Version: "0.162.0", Source: selection.SourceUI}) {
		t.Errorf("plan %+v, want 0.161.0 from rollout %s", p, sel.RolloutID)
	}
	// The rollout starts, and runs: still the from-version.
	h.pass(sel.RolloutID)
	if r, _ := h.store.GetRollout(context.Background(), sel.RolloutID); r.Status != rollout.Running {
		t.Fatalf("rollout %s, want running", r.Status)
	}
	if p, _ := h.installPlan("edge"); p.Version != "0.161.0" || p.Source != installplan.SourceRollout {
		t.Errorf("plan while running %+v", p)
	}
	// Paused: the target itself.
	wantOK(t, h.do(post("/api/v1/rollouts/"+sel.RolloutID+"/actions/pause", RoleOperator, "")))
	if p, _ := h.installPlan("edge"); p.Version != "0.162.0" || p.Source != installplan.SourceUI || p.RolloutID != "" {
		t.Errorf("plan while paused %+v", p)
	}
}

func TestInstallPlan_NotYetWhileThePlannerHasNotHandledTheTarget(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()

	// A UI selection without plannedAt: the planner has not seen it.
	h.setSelection("edge", selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0",
		SelectedBy: operator.Actor, SelectedAt: t0, UpdatedAt: t0, Revision: 1})
	p, rep := h.installPlan("edge")
	if p.Ready || p.Reason != installplan.ReasonSelectionNotPlanned || p.RetryAfterSeconds != installplan.RetrySelectionSeconds ||
		rep.header.Get("Retry-After") != "10" || p.Version != "" || p.Target.Version != "0.162.0" {
		t.Errorf("plan %+v (Retry-After %q)", p, rep.header.Get("Retry-After"))
	}
	now := t0.Add(time.Second)
	h.setSelection("edge", selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0",
		SelectedBy: operator.Actor, SelectedAt: t0, UpdatedAt: now, PlannedAt: &now, Revision: 2})
	if p, _ := h.installPlan("edge"); !p.Ready || p.Version != "0.162.0" {
		t.Errorf("planned selection %+v", p)
	}
	h.store.Lock()
	delete(h.store.Selections, "edge")
	h.store.Unlock()

	// A Git target that the members do not record yet (the revision is
	// applied, the planner's run has not written the members).
	h.store.Lock()
	for _, id := range []string{"e1", "e2", "e3", "e4"} {
		a := h.store.Agents[id]
		a.TargetVersion = "0.160.0"
		h.store.Agents[id] = a
	}
	h.store.Unlock()
	p, rep = h.installPlan("edge")
	if p.Ready || p.Reason != installplan.ReasonTargetNotPlanned || rep.header.Get("Retry-After") != "60" {
		t.Errorf("plan %+v", p)
	}
}

func TestInstallPlan_NoTargetIs409(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	h.setSelection("edge", selection.Selection{Fleet: "edge", Version: "0.170.0", State: selection.Invalidated, StateReason: "outside the frame",
		GitVersion: "0.161.0", SelectedBy: operator.Actor, SelectedAt: t0, UpdatedAt: t0, Revision: 1})
	p := wantProblem(t, h.do(get("/api/v1/fleets/edge/install-plan", RoleViewer)), http.StatusConflict, CodeNoVersionTarget)
	if p.Detail == "" {
		t.Error("no detail")
	}
	wantProblem(t, h.do(get("/api/v1/fleets/nope/install-plan", RoleViewer)), http.StatusNotFound, CodeFleetNotFound)
	wantProblem(t, h.do(get("/api/v1/fleets/Edge_GW/install-plan", RoleViewer)), http.StatusNotFound, CodeFleetNotFound)
	wantProblem(t, h.do(get("/api/v1/fleets/edge/install-plan?os=linux", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	wantProblem(t, h.do(req{method: http.MethodGet, path: "/api/v1/fleets/edge/install-plan"}), http.StatusUnauthorized, CodeUnauthenticated)
}
