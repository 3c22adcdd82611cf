package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// redMetrics answers every reading of a gate with, per pass, a red
// export-failures metric and a red dry-run metric, as a Prometheus whose
// collectors fail to export would.
type redMetrics struct{}

func (redMetrics) Read(_ context.Context, _ policy.Health, req gate.Request) []gate.Result {
	var out []gate.Result
	high, refused := 0.2, 14.0
	for _, p := range req.Passes {
		out = append(out,
			gate.Result{Kind: gate.KindMetric, Name: "export-failures", Scope: p.Name, Red: true, Value: &high, Detail: "value 0.2 above 0.01"},
			gate.Result{Kind: gate.KindMetric, Name: "refused", Scope: p.Name, Red: true, Value: &refused, Detail: "value 14 above 10", DryRun: true})
	}
	return out
}

const gatedSpec = `  waves:
    - name: canary
      selector: {matchAttributes: {labels.wave: canary}}
      bake: 2m
    - {name: rest, percent: 100, requireApproval: true}
  healthWait: 5m
  health:
    interval: 30s
    failuresToStop: 2
    metrics:
      - {name: export-failures, query: 'sum(rate(failed[2m]))', max: 0.01}
      - {name: refused, query: 'sum(rate(refused[5m]))', max: 10, dryRun: true}
`

// readGates takes the readings that are due, as the state machine's
// "Reading gates" step does, with the reader r.
func (h *harness) readGates(id string, r redMetrics) {
	h.t.Helper()
	p := h.evaluator
	p.Gates = r
	if _, err := p.ReadGates(context.Background(), id); err != nil {
		h.t.Fatal(err)
	}
}

// The canary's stage bakes with a health gate: the view shows its
// readings, the red result that blocks, the dry-run one beside it and when
// the next reading is due; the second red reading in a row fails the gate
// and the stage keeps it as lastRed.
func TestGetRollout_StageGateWithItsReadings(t *testing.T) {
	h := newHarness(t)
	spec := strings.Index(canaryPolicy, "  waves:")
	id := h.applyFiles(filesWithPolicy(canaryPolicy[:spec] + gatedSpec))
	h.pass(id)
	h.applyConfig("e1")
	h.pass(id)
	h.advance(5 * time.Minute)
	h.pass(id) // e1 succeeded: the stage bakes for 2m and its gate begins
	bakeFrom := h.clock()
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	st := v.Stages[0]
	if st.Status != rollout.StageBaking || st.Gate == nil || st.Gate.Readings != 0 || !st.Gate.Since.Equal(bakeFrom) ||
		!st.Gate.Until.Equal(bakeFrom.Add(2*time.Minute)) || st.Gate.NextAt == nil || !st.Gate.NextAt.Equal(bakeFrom.Add(30*time.Second)) {
		t.Fatalf("stage %s gate %+v, want baking, no reading yet, the first due in 30s", st.Status, st.Gate)
	}
	if hp := v.Policy.Health; hp == nil || hp.Interval != 30*time.Second || hp.FailuresToStop != 2 || len(hp.Metrics) != 2 ||
		hp.Metrics[0].Provider != policy.ProviderPrometheus || !hp.Metrics[1].DryRun {
		t.Errorf("policy health %+v, want the gate with its defaults", hp)
	}
	if v.Policy.Topology == nil || v.Policy.Topology.HostAttribute != policy.DefaultHostAttribute || v.Policy.Waves[0].Bake != 2*time.Minute {
		t.Errorf("policy topology %+v waves %+v", v.Policy.Topology, v.Policy.Waves)
	}

	h.advance(30 * time.Second)
	h.readGates(id, redMetrics{})
	h.pass(id)
	v = decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	st = v.Stages[0]
	g := st.Gate
	const lastRed = "metric export-failures (canary): value 0.2 above 0.01"
	if v.Status != rollout.Running || st.Status != rollout.StageBaking || g.Readings != 1 || g.ConsecutiveRed != 1 || g.LastRed != lastRed ||
		!g.NextAt.Equal(bakeFrom.Add(time.Minute)) {
		t.Fatalf("after one red reading: %s, stage %s, gate %+v; want still baking (failuresToStop 2), the next reading at +1m", v.Status, st.Status, g)
	}
	if len(g.Recent) != 1 || !g.Recent[0].Red || g.Recent[0].Checked != 2 || len(g.Recent[0].Results) != 2 ||
		g.Recent[0].Results[0].String() != lastRed || g.Recent[0].Results[1].String() != "metric refused (canary): value 14 above 10 [dry run]" ||
		*g.Recent[0].Results[0].Value != 0.2 {
		t.Errorf("recent readings %+v", g.Recent)
	}

	h.advance(30 * time.Second)
	h.readGates(id, redMetrics{})
	h.pass(id)
	v = decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	st = v.Stages[0]
	if v.Status != rollout.Paused || st.Status != rollout.StageFailed || st.LastRed != lastRed || st.Gate.Readings != 2 ||
		!strings.Contains(v.StatusReason, "stage canary: gate red: 2 consecutive red readings: "+lastRed) {
		t.Errorf("after two red readings: %s %q, stage %s lastRed %q", v.Status, v.StatusReason, st.Status, st.LastRed)
	}
}

// newRolloutView builds the batch gate of a pass and the decisions from
// what the engine stores: times in UTC, a decision's actor by the
// directory's name when it knows the actor, else as stored.
func TestNewRolloutView_BatchGateAndDecisions(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	at := t0.In(berlin)
	next := at.Add(30 * time.Second)
	r := rollout.Rollout{ID: "r-1", Fleet: "edge", Status: rollout.Running, CreatedAt: t0,
		Policy: policy.Snapshot{Approvals: policy.Approvals{Required: 2, Expiry: time.Hour}},
		Waves: []rollout.Wave{{Index: 0, Name: "rest", RequireApproval: true, Status: rollout.WaveWaitingApproval, WaitingSince: &at,
			Approvals: []rollout.Decision{{By: "Dana Operator", ActorID: operator.Actor, At: at}, {By: "Gone Person", ActorID: "user:gone", At: at}}}},
		Stages: []rollout.Stage{{Name: "rest/eu-1a", Status: rollout.StageRunning, Passes: []rollout.Pass{{Name: "rest/eu-1/eu-1a", Size: 4, BatchSize: 1, Batches: 4,
			Cleared: 1, Gate: &rollout.BatchGate{Batch: 1, State: gate.State{Since: at, Until: at.Add(time.Minute), NextAt: &next, Readings: 1,
				Recent: []gate.Reading{{At: at, Checked: 1}}}}}}}},
		FreezeOverride: &rollout.Decision{By: "Dana Operator", ActorID: operator.Actor, At: at, Reason: "hotfix"},
	}
	v := newRolloutView(r, tokenTable(t))
	w := v.Waves[0]
	if w.ApprovalsRequired != 2 || w.ApprovalExpiresAt == nil || w.ApprovalExpiresAt.Location() != time.UTC || !w.ApprovalExpiresAt.Equal(at.Add(time.Hour)) {
		t.Errorf("wave %+v", w)
	}
	if w.Approvals[0].By != "Dana Operator" || w.Approvals[1].By != "Gone Person" || w.Approvals[1].ByActor != "user:gone" || w.Approvals[0].At.Location() != time.UTC {
		t.Errorf("approvals %+v", w.Approvals)
	}
	p := v.Stages[0].Passes[0]
	if p.Cleared != 1 || p.Gate == nil || p.Gate.Batch != 1 || p.Gate.Readings != 1 || p.Gate.Since.Location() != time.UTC ||
		p.Gate.NextAt.Location() != time.UTC || p.Gate.Recent[0].At.Location() != time.UTC {
		t.Errorf("pass %+v gate %+v", p, p.Gate)
	}
	if o := v.FreezeOverride; o == nil || o.Reason != "hotfix" || o.ByActor != operator.Actor {
		t.Errorf("freezeOverride %+v", o)
	}
}
