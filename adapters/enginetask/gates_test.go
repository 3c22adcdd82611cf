package enginetask_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// scriptedGates answers each reading from a function of the request; it
// records the requests. The readers themselves are tested against real
// Prometheus and Alertmanager in core/gate.
type scriptedGates struct {
	mu    sync.Mutex
	reqs  []gate.Request
	redIn func(gate.Request) bool
}

func (g *scriptedGates) Read(_ context.Context, h policy.Health, req gate.Request) []gate.Result {
	g.mu.Lock()
	g.reqs = append(g.reqs, req)
	g.mu.Unlock()
	var out []gate.Result
	for _, p := range req.Passes {
		r := gate.Result{Kind: gate.KindMetric, Name: h.Metrics[0].Name, Scope: p.Name, Detail: "value 0 within ≤ 0.01"}
		if g.redIn(req) {
			r.Red, r.Detail = true, "value 0.2 above 0.01"
		}
		out = append(out, r)
	}
	return out
}

func zoneAttrs(i int) map[string]string {
	zones := []string{"eu-1a", "eu-1b"}
	a := map[string]string{"cloud.region": "eu-1", "cloud.availability_zone": zones[i%2], "host.name": "h" + string(rune('0'+i))}
	if i == 0 {
		a["labels.wave"] = "canary"
	}
	return a
}

func gatedSpec() policy.Spec {
	limit := 0.01
	return policy.Spec{
		Waves: []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}, Bake: 2 * time.Minute},
			{Name: "zones", Percent: 100, By: policy.SplitZone, Bake: 2 * time.Minute, MaxUnavailable: policy.Amount{Value: 5}},
		},
		HealthWait: time.Minute, OnFailure: policy.OnFailureRollbackWave,
		Health: &policy.Health{Interval: 30 * time.Second, Metrics: []policy.Metric{{Name: "export-failures", Query: "q", Max: &limit}}},
	}
}

func TestStateMachine_RedGateRollsBackItsStage(t *testing.T) {
	r := newRig(t)
	g := &scriptedGates{redIn: func(req gate.Request) bool { return req.Stage == "zones/eu-1b" }}
	r.h.Gates = g
	ids := r.agents(5, zoneAttrs)
	r.start("r-gates", policy.KindConfig, gatedSpec(), ids, zoneAttrs)
	r.run(nil)
	ro := r.wantStatus("r-gates", rollout.RolledBack)
	if !strings.Contains(ro.StatusReason, "stage zones/eu-1b: gate red: metric export-failures (zones/eu-1/eu-1b): value 0.2 above 0.01") {
		t.Fatalf("reason %q", ro.StatusReason)
	}
	byName := map[string]rollout.Stage{}
	for _, st := range ro.Stages {
		byName[st.Name] = st
	}
	if byName["zones/eu-1a"].Status != rollout.StagePassed || byName["zones/eu-1a"].Gate.Readings != 4 {
		t.Fatalf("zones/eu-1a %+v: green, 4 readings over a 2m bake", byName["zones/eu-1a"])
	}
	_, ts := r.rollout("r-gates")
	for _, tg := range ts {
		zone := zoneAttrs(int(tg.AgentID[2] - '0'))["cloud.availability_zone"]
		want := rollout.TargetSucceeded
		if zone == "eu-1b" && tg.AgentID != "a00" {
			want = rollout.TargetRolledBack
		}
		if tg.Status != want {
			t.Errorf("%s in %s: %s, want %s", tg.AgentID, zone, tg.Status, want)
		}
	}
	states, _ := r.history("r-gates")
	if !contains(states, "Reading gates") {
		t.Fatalf("states %v: a gate reading is a visible step", states)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	first := g.reqs[0]
	if first.Fleet != "edge" || first.Stage != "canary" || len(first.Hosts) != 1 || first.Hosts[0].Host != "h0" || first.Passes[0].Zone != "eu-1a" {
		t.Fatalf("first request %+v: the canary's pass, its zone from the agent, its host", first)
	}
}

func TestStateMachine_ApprovalExpires(t *testing.T) {
	r := newRig(t)
	r.h.Audit = r.st
	spec := canaryThenAll()
	spec.Approvals = policy.Approvals{Expiry: 2 * time.Hour}
	ids := r.agents(4, canaryAttrs)
	r.start("r-expire", policy.KindConfig, spec, ids, canaryAttrs)
	r.run(nil)
	r.wantStatus("r-expire", rollout.WaitingApproval)
	r.run(func() bool { ro, _ := r.rollout("r-expire"); return ro.Status != rollout.WaitingApproval })
	ro := r.wantStatus("r-expire", rollout.Paused)
	if !strings.Contains(ro.StatusReason, "expired after 2h0m0s") || ro.Waves[1].Rejected == nil {
		t.Fatalf("reason %q wave %+v", ro.StatusReason, ro.Waves[1])
	}
	if exp := ro.Waves[1].WaitingSince.Add(2 * time.Hour); ro.Waves[1].Rejected.At.Before(exp) {
		t.Fatalf("expired at %s, before %s", ro.Waves[1].Rejected.At, exp)
	}
	page, err := r.st.AuditOf(r.ctx, "rollout", "r-expire", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Action != "rollout.approval_expire" || page.Items[0].Actor != enginetask.SystemActor ||
		!strings.Contains(fmt.Sprint(page.Items[0].Details["reason"]), "expired after 2h0m0s") {
		t.Fatalf("audit %+v: the expiry is audited", page.Items)
	}
}

func TestStateMachine_FreezeParksAndEnds(t *testing.T) {
	for _, override := range []bool{false, true} {
		t.Run(fmt.Sprintf("override=%v", override), func(t *testing.T) {
			r := newRig(t)
			from, until := t0.Add(-time.Hour), t0.Add(6*time.Hour)
			spec := policy.Spec{HealthWait: time.Minute, Freezes: []policy.Freeze{{Name: "holidays", From: &from, Until: &until}}}
			ids := r.agents(2, nil)
			r.start("r-freeze", policy.KindConfig, spec, ids, nil)
			r.run(nil)
			ro := r.wantStatus("r-freeze", rollout.Frozen)
			if ro.TaskToken == "" {
				t.Fatal("a frozen rollout parks on a token")
			}
			if states, _ := r.history("r-freeze"); states[len(states)-1] != "Held by a freeze" {
				t.Fatalf("states %v", states)
			}
			if override {
				r.operate("r-freeze", engine.Request{Action: engine.ActionResume, Actor: "user:bob", FreezeOverride: true, Reason: "hotfix"})
			}
			r.run(func() bool { ro, _ := r.rollout("r-freeze"); return ro.Status.Final() })
			ro = r.wantStatus("r-freeze", rollout.Completed)
			switch {
			case override && !ro.FinishedAt.Before(until):
				t.Fatalf("with the override the rollout finished at %s, not before the freeze's end", ro.FinishedAt)
			case !override && ro.Stages[0].StartedAt.Before(until):
				t.Fatalf("without it the stage started at %s, before the freeze's end %s", ro.Stages[0].StartedAt, until)
			}
		})
	}
}
