package stack

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/gate/gatetest"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// The gates end to end: the local stack with a simulated fleet in 2 regions
// × 2 zones (agent 1, the canary, and 5, 9 in eu-1a; 2, 6 in eu-1b; 3, 7 in
// us-1a; 4, 8 in us-1b) whose collectors expose their pipeline metrics to a
// real Prometheus and answer health checks, and a real Alertmanager.

// exportFailMarker in a configuration makes the collectors of the zone the
// run names fail their exports (simfleet's ExportFailure).
const exportFailMarker = "# exporter-fail"

type gatedRun struct {
	t        *testing.T
	ctx      context.Context
	s        *Stack
	c, op    client
	fleet    *simfleet.Fleet
	files    map[string][]byte
	promURL  string
	alertURL string
}

// startGated brings up the stack, Prometheus scraping the fleet every 500ms,
// Alertmanager, and the fleet, whose exports fail in failZone ("" none) once
// its collectors run a configuration with exportFailMarker.
func startGated(t *testing.T, prefix, failZone string) *gatedRun {
	t.Helper()
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	metrics := metricsListener(t)
	g := &gatedRun{t: t, ctx: ctx}
	g.promURL = gatetest.StartPrometheus(t, []string{metrics.Addr().String()}, 500*time.Millisecond)
	g.alertURL = gatetest.StartAlertmanager(t)
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: prefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour,
		PrometheusURL: g.promURL, AlertmanagerURL: g.alertURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	g.s, g.c, g.op = s, client{base: s.APIURL, token: s.AdminToken}, client{base: s.APIURL, token: s.OperatorToken}
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.CanaryCount = 9, s.GatewayURL, s.AgentToken, 10, 1
	cfg.Zones = []string{"eu-1/eu-1a", "eu-1/eu-1b", "us-1/us-1a", "us-1/us-1b"}
	cfg.MetricsListener, cfg.HealthCheck = metrics, true
	if failZone != "" {
		cfg.ExportFailure = simfleet.ExportFailure{Marker: exportFailMarker, Where: failZone, Fraction: 1}
	}
	g.fleet = connectFleet(t, ctx, s, cfg)
	gatetest.WaitForData(t, g.promURL, `otelcol_exporter_sent_spans_total`)
	return g
}

// metricsListener opens a loopback listener for the fleet's metrics, whose address
// Prometheus is told before the fleet starts; the listener stays open
// until the fleet serves on it, so that no other test takes its port.
func metricsListener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// gatesPolicy is the zones policy of the topology tests (a bake of 2s after
// every stage) with more spec lines: the gates.
func gatesPolicy(onFailure, extra string) string { return zonesPolicy(onFailure) + extra }

// exportFailures is the share of spans the exporters of the pass's zone
// failed to send over the last 3s; the floor of the denominator keeps a
// zone whose collectors all restart at once from reading as no data.
const exportFailures = `  health:
    interval: 1s
    metrics:
      - name: export-failures
        query: 'sum(rate(otelcol_exporter_send_failed_spans_total{zone=~"{zone}"}[3s])) / clamp_min(sum(rate(otelcol_exporter_sent_spans_total{zone=~"{zone}"}[3s])) + sum(rate(otelcol_exporter_send_failed_spans_total{zone=~"{zone}"}[3s])), 1)'
        max: 0.05
`

// bootstrap applies the quickstart fleet with policy; change then applies a
// changed configuration (with the marker when fail) and returns the rollout.
func (g *gatedRun) bootstrap(policy string) {
	g.t.Helper()
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		g.t.Fatal(err)
	}
	files["policies/zones.yaml"] = []byte(policy)
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: zones", 1))
	if err := g.s.apply(g.ctx, g.c, files, "gated-1"); err != nil {
		g.t.Fatal(err)
	}
	hash1 := revision.Hash(files["configs/edge.yaml"])
	if err := g.fleet.Wait(g.ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == hash1 })); err != nil {
		g.t.Fatalf("bootstrap: %v", err)
	}
	g.files = files
}

func (g *gatedRun) change(fail bool) string {
	g.t.Helper()
	line := "# a changed batch timeout\n"
	if fail {
		line = exportFailMarker + "\n"
	}
	g.files["configs/edge.yaml"] = append(append([]byte(nil), g.files["configs/edge.yaml"]...), []byte(line)...)
	id, err := g.s.applyForRollout(g.ctx, g.c, g.files, "gated-2")
	if err != nil {
		g.t.Fatal(err)
	}
	return id
}

// until polls the rollout until ok says so.
func (g *gatedRun) until(id string, what string, ok func(rollout.Rollout) bool) (rollout.Rollout, []rollout.Target) {
	g.t.Helper()
	for {
		r, ts, err := g.s.Deps.Store.LoadRollout(g.ctx, id)
		if err != nil {
			g.t.Fatal(err)
		}
		if ok(r) {
			return r, ts
		}
		if r.Status.Final() || r.Status == rollout.Failed {
			g.t.Fatalf("rollout %s ended %s (%s) before %s; stages %v; freezes %+v; passes %+v", id, r.Status, r.StatusReason, what, stageNames(r), r.Policy.Freezes, r.Stages[len(r.Stages)-1].Passes)
		}
		if err := sleep(g.ctx, 200*time.Millisecond); err != nil {
			g.t.Fatalf("rollout %s is %s (%s), stages %v, waiting for %s: %v", id, r.Status, r.StatusReason, stageNames(r), what, err)
		}
	}
}

func ended(r rollout.Rollout) bool {
	return r.Status.Final() || r.Status == rollout.Failed || r.Status == rollout.Paused
}

func stageByName(r rollout.Rollout, name string) rollout.Stage {
	for _, st := range r.Stages {
		if st.Name == name {
			return st
		}
	}
	return rollout.Stage{}
}

// The change breaks the exports of us-1a: the metric gate of the stage
// rest/us-1a turns red on the collectors' own pipeline metrics in
// Prometheus, and rollback-wave returns that stage; the stages before it
// passed their gates and keep the change.
func TestGates_ZoneExportsFail_MetricGateRed_RollbackWave(t *testing.T) {
	g := startGated(t, "gate-metric-", "us-1/us-1a")
	g.bootstrap(gatesPolicy("rollback-wave", exportFailures))
	id := g.change(true)
	r, ts := g.until(id, "the end", ended)
	if r.Status != rollout.RolledBack {
		t.Fatalf("rollout %s (%s), stages %v; want rolled_back", r.Status, r.StatusReason, stageNames(r))
	}
	red := stageByName(r, "rest/us-1a")
	if red.Status != rollout.StageFailed || !strings.Contains(red.LastRed, "metric export-failures (rest/us-1/us-1a): value") || !strings.Contains(red.LastRed, "above 0.05") {
		t.Fatalf("stage rest/us-1a %s, last red %q", red.Status, red.LastRed)
	}
	if !strings.Contains(r.StatusReason, "stage rest/us-1a: gate red: metric export-failures") {
		t.Fatalf("reason %q", r.StatusReason)
	}
	// A stage passes on a green reading taken at its bake's end or after
	// (the canary has no bake). How many readings the bake saw before it
	// depends on when the engine woke, which a busy machine delays; that
	// a gate is read at every interval of a bake is core/engine's
	// TestGates_GreenStagePassesAtTheEndOfItsBake, on a clock of its own.
	for _, name := range []string{"canary", "eu-1/eu-1a", "eu-1/eu-1b"} {
		st := stageByName(r, name)
		if st.Status != rollout.StagePassed || st.Gate == nil || len(st.Gate.Recent) == 0 || st.Gate.Consecutive != 0 {
			t.Errorf("stage %s: %s, gate %+v; want passed after a green reading", name, st.Status, st.Gate)
			continue
		}
		if last := st.Gate.Recent[len(st.Gate.Recent)-1]; last.Red || last.At.Before(st.Gate.Until) {
			t.Errorf("stage %s: passed on the reading %+v, want a green one at the bake's end (%s) or after", name, last, st.Gate.Until)
		}
	}
	for _, tg := range ts {
		st := r.Stages[tg.Stage].Name
		switch {
		case st == "rest/us-1a" && tg.Status != rollout.TargetRolledBack:
			t.Errorf("%s in the red stage: %s, want rolled_back", tg.AgentID, tg.Status)
		case st == "rest/us-1b" && tg.StartedAt != nil:
			t.Errorf("%s after the red stage started", tg.AgentID)
		case strings.HasPrefix(st, "eu-1") && tg.Status != rollout.TargetSucceeded:
			t.Errorf("%s in a passed stage: %s, want succeeded", tg.AgentID, tg.Status)
		}
	}
}

// A critical alert for region us-1 blocks the rollout at us-1's first stage;
// eu-1 is not concerned and passes.
func TestGates_AlertForOneRegion_StopsAtItsStage(t *testing.T) {
	g := startGated(t, "gate-alert-", "")
	g.bootstrap(gatesPolicy("stop", "  health:\n    interval: 1s\n    alerts:\n      blockOn: [\"severity=critical\"]\n"))
	gatetest.PostAlert(t, g.alertURL, map[string]string{"alertname": "CollectorQueueFull", "severity": "critical", "region": "us-1"})
	gatetest.PostAlert(t, g.alertURL, map[string]string{"alertname": "CollectorSlow", "severity": "warning"})
	id := g.change(false)
	r, _ := g.until(id, "the pause", ended)
	if r.Status != rollout.Paused {
		t.Fatalf("rollout %s (%s), want paused", r.Status, r.StatusReason)
	}
	red := stageByName(r, "rest/us-1a")
	if red.Status != rollout.StageFailed || !strings.Contains(red.LastRed, "CollectorQueueFull") || strings.Contains(red.LastRed, "CollectorSlow") {
		t.Fatalf("stage rest/us-1a %s, last red %q", red.Status, red.LastRed)
	}
	for _, name := range []string{"canary", "eu-1/eu-1a", "eu-1/eu-1b"} {
		if st := stageByName(r, name); st.Status != rollout.StagePassed {
			t.Errorf("stage %s is %s: the alert concerns us-1 only", name, st.Status)
		}
	}
}

// A batch gate probes each batch's collectors before the next batch: the
// first batch of eu-1b breaks its exports, its health check answers 503,
// and the second batch is never touched.
func TestGates_BatchGateCatchesABadBatch(t *testing.T) {
	g := startGated(t, "gate-batch-", "eu-1/eu-1b")
	policy := `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: zones}
spec:
  waves:
    - {name: canary, selector: {matchAttributes: {labels.wave: canary}}}
    - {name: eu-1, selector: "cloud.region=eu-1", by: zone, maxUnavailable: 1, batchBake: 2s}
    - {name: rest, percent: 100}
  topology: {hostAttribute: ` + simfleet.ProbeAttribute + `}
  maxConcurrent: 0
  healthWait: 1s
  applyTimeout: 1m
  health:
    interval: 1s
    probes:
      - url: "http://{host}/"
`
	g.bootstrap(policy)
	id := g.change(true)
	r, ts := g.until(id, "the pause", ended)
	if r.Status != rollout.Paused || !strings.Contains(r.StatusReason, "batch gate of eu-1/eu-1/eu-1b#0 red") || !strings.Contains(r.StatusReason, "status 503, want 200") {
		t.Fatalf("rollout %s (%s), stages %v", r.Status, r.StatusReason, stageNames(r))
	}
	for _, tg := range ts {
		if r.Stages[tg.Stage].Name == "eu-1/eu-1b" && tg.Batch == 1 && tg.StartedAt != nil {
			t.Fatalf("%s of the batch after the red gate started", tg.AgentID)
		}
	}
	if st := stageByName(r, "eu-1/eu-1a"); st.Status != rollout.StagePassed {
		t.Fatalf("eu-1a, whose batches are healthy, is %s", st.Status)
	}
}

// Approvals between waves: the admin who applied the revision cannot
// approve its rollout; the operator can; an approval nobody gives expires
// and stops the rollout.
func TestGates_Approvals_NoSelfApproval_Expiry(t *testing.T) {
	g := startGated(t, "gate-approve-", "")
	g.bootstrap(gatesPolicy("stop", "  approvalsBetween: [canary, eu-1]\n  approvals: {expiry: 1m}\n"))
	id := g.change(false)
	r, _ := g.until(id, "the approval after the canary", func(r rollout.Rollout) bool { return r.Status == rollout.WaitingApproval })
	err := g.c.do(g.ctx, "POST", "/api/v1/rollouts/"+id+"/actions/approve", map[string]int{"wave": 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "self_approval") {
		t.Fatalf("the admin approving the rollout of the revision they applied: %v, want self_approval", err)
	}
	if err := g.op.do(g.ctx, "POST", "/api/v1/rollouts/"+id+"/actions/approve", map[string]any{"wave": 1, "reason": "canary looks good"}, nil); err != nil {
		t.Fatalf("the operator approves: %v", err)
	}
	r, _ = g.until(id, "the approval after eu-1", func(r rollout.Rollout) bool {
		return r.Status == rollout.WaitingApproval && r.Waves[2].Status == rollout.WaveWaitingApproval
	})
	if a := r.Waves[1].Approvals; len(a) != 1 || a[0].By != "local operator" || a[0].Reason != "canary looks good" {
		t.Fatalf("approvals of wave 1: %+v", a)
	}
	r, _ = g.until(id, "the expiry", ended)
	if r.Status != rollout.Paused || !strings.Contains(r.StatusReason, `the approval of wave 2 "rest" expired after 1m0s`) {
		t.Fatalf("rollout %s (%s), want paused by the expiry", r.Status, r.StatusReason)
	}
	if exp := r.Waves[2].WaitingSince.Add(time.Minute); r.Waves[2].Rejected == nil || r.Waves[2].Rejected.At.Before(exp) {
		t.Fatalf("wave 2 %+v: expired, not before %s", r.Waves[2], exp)
	}
	page, err := g.s.Deps.Store.AuditOf(g.ctx, "rollout", id, "", 50)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range page.Items {
		actions = append(actions, e.Action+":"+e.Result)
	}
	if got := strings.Join(actions, " "); !strings.Contains(got, "rollout.approve:failure") || !strings.Contains(got, "rollout.approve:success") {
		t.Fatalf("audit %s: the refused and the given approval are audited", got)
	}
}

// A freeze of us-1 holds the first stage of us-1, visibly, until it ends;
// then the rollout goes on by itself and completes.
func TestGates_FreezeHoldsOneRegion(t *testing.T) {
	g := startGated(t, "gate-freeze-", "")
	g.bootstrap(gatesPolicy("stop", ""))
	// the change comes with the freeze; the canary and eu-1 take well under
	// 55s (their stages, bakes and gate readings), so us-1 waits
	until := time.Now().Add(55 * time.Second).UTC().Truncate(time.Second)
	freeze := fmt.Sprintf("  freezes:\n    - {name: change-freeze, regions: [us-1], from: %q, until: %q}\n",
		time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), until.Format(time.RFC3339))
	g.files["policies/zones.yaml"] = []byte(gatesPolicy("stop", freeze))
	id := g.change(false)
	r, _ := g.until(id, "the freeze", func(r rollout.Rollout) bool { return stageByName(r, "rest/us-1a").Status == rollout.StageFrozen })
	held := stageByName(r, "rest/us-1a").Held
	if !strings.Contains(held, `freeze "change-freeze" (us-1) until `+until.Format(time.RFC3339)) || r.Status != rollout.Frozen ||
		!strings.Contains(r.StatusReason, "held by freeze") {
		t.Fatalf("held %q, rollout %s (%s)", held, r.Status, r.StatusReason)
	}
	if st := stageByName(r, "eu-1/eu-1b"); st.Status != rollout.StagePassed {
		t.Fatalf("eu-1 is not frozen: eu-1/eu-1b is %s", st.Status)
	}
	r, _ = g.until(id, "the end", func(r rollout.Rollout) bool { return r.Status.Final() })
	if r.Status != rollout.Completed {
		t.Fatalf("rollout %s (%s)", r.Status, r.StatusReason)
	}
	if st := stageByName(r, "rest/us-1a"); st.StartedAt == nil || st.StartedAt.Before(until) {
		t.Fatalf("rest/us-1a started %v, before the freeze ended at %s", st.StartedAt, until)
	}
}
