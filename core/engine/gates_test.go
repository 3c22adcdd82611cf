package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// gatedFixture: a canary (a0 in r1a), then a wave "zones" by zone: r1a
// (a1, a2) and r2a (a3, a4), with a 2-minute bake after each stage and a
// health gate read every 30s.
func gatedFixture(t *testing.T, tweak func(*policy.Spec)) *fixture {
	t.Helper()
	one := 1.0
	spec := policy.Spec{
		Waves: []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}, Bake: 2 * time.Minute},
			{Name: "zones", Percent: 100, By: policy.SplitZone, Bake: 2 * time.Minute, MaxUnavailable: policy.Amount{Value: 1}},
		},
		MaxConcurrent: intp(0), HealthWait: time.Minute,
		Health: &policy.Health{Interval: 30 * time.Second, Metrics: []policy.Metric{{Name: "export-failures", Query: "q", Max: &one}}},
	}
	if tweak != nil {
		tweak(&spec)
	}
	snap := policy.Policy{Name: "gated", Spec: spec}.Snapshot(policy.KindConfig)
	place := map[string][2]string{"a0": {"r1", "r1a"}, "a1": {"r1", "r1a"}, "a2": {"r1", "r1a"}, "a3": {"r2", "r2a"}, "a4": {"r2", "r2a"}}
	return createdFixture(t, snap, []string{"a0", "a1", "a2", "a3", "a4"}, func(id string) map[string]string {
		return map[string]string{"cloud.region": place[id][0], "cloud.availability_zone": place[id][1], "host.name": id + ".example"}
	})
}

var redResult = gate.Result{Kind: gate.KindMetric, Name: "export-failures", Scope: "r1/r1a", Red: true, Detail: "value 0.2 above 0.01"}

// read records one reading of every gate the last pass asked for, as the
// adapter does, red or green, and evaluates again.
func (f *fixture) read(red bool) {
	f.t.Helper()
	if len(f.last.GatesDue) == 0 {
		f.t.Fatalf("at +%s no gate reading is due", f.now.Sub(t0))
	}
	rs := []gate.Result{{Kind: gate.KindMetric, Name: "export-failures", Detail: "value 0 within ≤ 1"}}
	if red {
		rs = []gate.Result{redResult}
	}
	interval := f.r.Policy.Health.Interval
	for _, d := range f.last.GatesDue {
		st := &f.r.Stages[d.Stage]
		if d.Pass == StageGate {
			g := st.Gate.Record(f.now, rs, interval)
			st.Gate = &g
		} else {
			g := *st.Passes[d.Pass].Gate
			g.State = g.State.Record(f.now, rs, interval)
			st.Passes[d.Pass].Gate = &g
		}
	}
	f.tick()
}

// toNext advances to the next deadline and evaluates.
func (f *fixture) toNext() {
	f.t.Helper()
	if f.last.NextDeadline.IsZero() {
		f.t.Fatal("nothing is scheduled")
	}
	f.now = f.last.NextDeadline
	f.tick()
}

func TestGates_GreenStagePassesAtTheEndOfItsBake(t *testing.T) {
	f := gatedFixture(t, nil)
	f.tick()
	f.settle() // a0 succeeded at +1m: the canary stage bakes until +3m
	if st := f.r.Stages[0]; st.Status != rollout.StageBaking || st.Gate == nil || !st.Gate.Until.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("stage %+v", st)
	}
	f.wantDeadline(t0.Add(90 * time.Second)) // the first reading, 30s into the bake
	for i := 0; i < 4; i++ {
		f.toNext()
		f.read(false)
	}
	if st := f.r.Stages[0]; st.Status != rollout.StagePassed || st.Gate.Readings != 4 {
		t.Fatalf("stage %+v, want passed after 4 green readings", st)
	}
	if f.now != t0.Add(3*time.Minute) {
		t.Fatalf("passed at +%s, want +3m", f.now.Sub(t0))
	}
	if got := f.inFlightIDs(); len(got) != 1 {
		t.Fatalf("in flight %v: the first zone starts right after the canary's gate", got)
	}
	if got := strings.Join(f.events, " "); !strings.Contains(got, "rollout.stage_started rollout.stage_passed rollout.stage_started") {
		t.Fatalf("events %s: a stage's start and pass are events", got)
	}
}

func TestGates_RedStageStopsTheRolloutAtOnce(t *testing.T) {
	f := gatedFixture(t, nil)
	f.tick()
	f.settle()
	f.toNext()
	f.read(true)
	f.wantRollout(rollout.Paused)
	f.wantPass(passExpectation{events: []string{"rollout.gate_red", "rollout.paused"}}) // nothing starts, nothing is scheduled
	if st := f.r.Stages[0]; st.Status != rollout.StageFailed || st.LastRed != "metric export-failures (r1/r1a): value 0.2 above 0.01" {
		t.Fatalf("stage %+v", st)
	}
	if !strings.Contains(f.r.StatusReason, "stage canary: gate red: metric export-failures (r1/r1a): value 0.2 above 0.01") {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
	if got := f.inFlightIDs(); len(got) != 0 {
		t.Fatalf("in flight %v: no stage starts after a red gate", got)
	}
	// resume: the stage bakes again from now, with a fresh gate
	if err := f.act(Request{Action: ActionResume, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	if st := f.r.Stages[0]; st.Status != rollout.StageBaking || st.Gate.Readings != 0 || !st.Gate.Until.Equal(f.now.Add(2*time.Minute)) {
		t.Fatalf("after resume stage %+v, want a fresh bake", st)
	}
}

func TestGates_FailuresToStopAndTheLastReading(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) { s.Health.FailuresToStop = 2 })
	f.tick()
	f.settle()
	f.toNext()
	f.read(true) // one red reading: not yet
	f.wantRollout(rollout.Running)
	f.toNext()
	f.read(false)
	f.toNext()
	f.read(false)
	f.toNext()
	f.read(true) // the reading at the end of the bake is red
	f.wantRollout(rollout.Paused)
	if !strings.Contains(f.r.StatusReason, "the last reading of the bake is red") {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
}

func TestGates_RedGateRollsBackTheStage(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) { s.OnFailure = policy.OnFailureRollbackWave })
	f.tick()
	f.settle()
	for i := 0; i < 4; i++ {
		f.toNext()
		f.read(false)
	}
	f.settle() // zones/r1a: a1 then a2, one batch each
	f.settle()
	if st := f.r.Stages[1]; st.Status != rollout.StageBaking {
		t.Fatalf("stage %+v", st)
	}
	f.toNext()
	f.read(true)
	f.wantRollout(rollout.RollingBack)
	if q := f.r.RollbackQueue; len(q) != 1 || q[0] != 1 {
		t.Fatalf("rollback queue %v, want the red stage alone", q)
	}
	if a := f.target("a1"); a.RollbackAt == nil {
		t.Fatalf("a1 %+v must roll back", a)
	}
	if a := f.target("a0"); a.RollbackAt != nil {
		t.Fatal("the canary, which passed, keeps the change with rollback-wave")
	}
}

func TestGates_DryRunNeverStops(t *testing.T) {
	f := gatedFixture(t, nil)
	f.tick()
	f.settle()
	f.toNext()
	dry := redResult
	dry.DryRun = true
	g := f.r.Stages[0].Gate.Record(f.now, []gate.Result{dry}, 30*time.Second)
	f.r.Stages[0].Gate = &g
	f.tick()
	f.wantRollout(rollout.Running)
}

func TestGates_BatchGateHoldsTheNextBatch(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Waves[1].BatchBake = time.Minute
		s.Waves[1].BatchGate = true
		s.Health.Probes = []policy.Probe{{URL: "http://{host}:13133/"}}
	})
	f.tick()
	f.settle()
	for i := 0; i < 4; i++ {
		f.toNext()
		f.read(false)
	}
	f.settle() // batch 0 of zones/r1a is final
	if got := f.inFlightIDs(); len(got) != 0 {
		t.Fatalf("in flight %v: batch 1 waits for the batch gate", got)
	}
	if p := f.r.Stages[1].Passes[0]; p.Gate == nil || p.Gate.Batch != 0 {
		t.Fatalf("pass %+v: a batch gate after batch 0", p)
	}
	f.toNext()
	f.read(false) // +30s of the batch gate
	f.toNext()
	f.read(true) // the last reading of the batch gate is red
	f.wantRollout(rollout.Paused)
	if !strings.Contains(f.r.StatusReason, "batch gate of zones/r1/r1a#0 red") {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		if tg := f.target(id); tg.Batch == 1 && tg.StartedAt != nil {
			t.Fatalf("%s of batch 1 started after a red batch gate", id)
		}
	}
}

func TestGates_BatchGateWithoutProbesIsAWait(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.Waves[1].BatchBake = time.Minute
		s.Waves[1].BatchGate = true
	})
	f.tick()
	f.settle()
	f.toNext() // the canary's bake
	f.settle()
	start := f.now
	if len(f.last.GatesDue) != 0 || len(f.inFlightIDs()) != 0 {
		t.Fatalf("nothing is read and nothing starts during the batch wait: %+v", f.last.GatesDue)
	}
	f.toNext()
	if f.now.Sub(start) != time.Minute || len(f.inFlightIDs()) != 1 {
		t.Fatalf("batch 1 starts 1m after batch 0: at +%s in flight %v", f.now.Sub(start), f.inFlightIDs())
	}
}

func TestFreezes_HoldOnlyTheFrozenRegion(t *testing.T) {
	from, until := t0, t0.Add(6*time.Hour)
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.Freezes = []policy.Freeze{{Name: "holidays", Regions: []string{"r2"}, From: &from, Until: &until}}
	})
	f.tick() // the canary, in r1, is not held
	if got := f.inFlightIDs(); len(got) != 1 {
		t.Fatalf("in flight %v", got)
	}
	f.settle()
	f.toNext() // bake of the canary
	f.settle() // zones/r1a
	f.settle()
	f.toNext() // its bake; zones/r2a is frozen
	st := f.r.Stages[2]
	if st.Status != rollout.StageFrozen || !strings.Contains(st.Held, `freeze "holidays" (r2) until `+until.Format(time.RFC3339)) {
		t.Fatalf("stage %+v", st)
	}
	f.wantRollout(rollout.Frozen)
	if !strings.Contains(f.r.StatusReason, "stage zones/r2a held by freeze") {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
	f.wantDeadline(until)
	f.toNext()
	if st := f.r.Stages[2]; st.Status != rollout.StageRunning || f.r.StatusReason != "" || f.r.Status != rollout.Running {
		t.Fatalf("stage %+v reason %q: the stage starts by itself when the freeze ends", st, f.r.StatusReason)
	}
}

func TestFreezes_OverrideIsRecorded(t *testing.T) {
	from, until := t0, t0.Add(6*time.Hour)
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.Freezes = []policy.Freeze{{Name: "all", From: &from, Until: &until}}
	})
	f.tick()
	if f.r.Stages[0].Status != rollout.StageFrozen {
		t.Fatalf("stage %+v", f.r.Stages[0])
	}
	if err := f.act(Request{Action: ActionResume, Actor: "user:bob"}); err == nil {
		t.Fatal("resume without freezeOverride is refused on a frozen rollout")
	}
	if err := f.act(Request{Action: ActionResume, Actor: "user:bob", FreezeOverride: true, Reason: "hotfix"}); err != nil {
		t.Fatal(err)
	}
	if o := f.r.FreezeOverride; o == nil || o.By != "user:bob" || o.Reason != "hotfix" {
		t.Fatalf("override %+v", o)
	}
	f.tick()
	if got := f.inFlightIDs(); len(got) != 1 {
		t.Fatalf("in flight %v: the override bypasses the freeze", got)
	}
}

func approvalFixture(t *testing.T, required int) *fixture {
	return gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.ApprovalsBetween = []string{"canary"}
		s.Approvals = policy.Approvals{Required: required, Expiry: time.Hour}
	})
}

// toApproval runs the canary and its bake: the zones wave waits.
func (f *fixture) toApproval() {
	f.t.Helper()
	f.tick()
	f.settle()
	f.toNext()
	f.wantRollout(rollout.WaitingApproval)
}

func TestApprovals_RulesBetweenWaves(t *testing.T) {
	f := approvalFixture(t, 2)
	f.toApproval()
	var re *RefusedError
	err := f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:alice"})
	if !asRefused(err, &re) || re.Code != CodeSelfApproval {
		t.Fatalf("approval by the creator: %v, want %s", err, CodeSelfApproval)
	}
	err = f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:carol", Creators: []string{"user:dan", "user:carol"}})
	if !asRefused(err, &re) || re.Code != CodeSelfApproval {
		t.Fatalf("approval by who applied the revision: %v, want %s", err, CodeSelfApproval)
	}
	if err := f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantRollout(rollout.WaitingApproval)
	if f.r.StatusReason != `wave 1 "zones" waits for approval (1 of 2)` {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
	err = f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:bob"})
	if !asRefused(err, &re) || re.Code != CodeWaveApproved {
		t.Fatalf("a second approval by bob: %v, want %s", err, CodeWaveApproved)
	}
	if err := f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:dave"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantRollout(rollout.Running)
	if a := f.r.Waves[1].Approvals; len(a) != 2 || a[0].By != "user:bob" || a[1].By != "user:dave" {
		t.Fatalf("approvals %+v", a)
	}
}

func TestApprovals_RejectStopsWithOnFailure(t *testing.T) {
	f := approvalFixture(t, 1)
	f.toApproval()
	if err := f.act(Request{Action: ActionReject, Wave: 1, Actor: "user:bob", Reason: "canary looks slow"}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.Paused)
	if f.r.StatusReason != `wave 1 "zones" rejected by user:bob: canary looks slow` || f.r.Waves[1].Rejected == nil {
		t.Fatalf("reason %q wave %+v", f.r.StatusReason, f.r.Waves[1])
	}
	// resume asks for a new approval
	if err := f.act(Request{Action: ActionResume, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantRollout(rollout.WaitingApproval)
}

func TestApprovals_RejectWithRollbackAll(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.ApprovalsBetween = []string{"canary"}
		s.OnFailure = policy.OnFailureRollbackAll
	})
	f.toApproval()
	if err := f.act(Request{Action: ActionReject, Wave: 1, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.RollingBack)
	if a := f.target("a0"); a.RollbackAt == nil {
		t.Fatal("a rejection after the canary rolls the canary back")
	}
}

func TestApprovals_Expire(t *testing.T) {
	f := approvalFixture(t, 1)
	f.toApproval()
	f.wantDeadline(f.now.Add(time.Hour))
	f.toNext()
	f.wantRollout(rollout.Paused)
	if !strings.Contains(f.r.StatusReason, `the approval of wave 1 "zones" expired after 1h0m0s`) {
		t.Fatalf("reason %q", f.r.StatusReason)
	}
	var re *RefusedError
	if err := f.act(Request{Action: ActionApprove, Wave: 1, Actor: "user:bob"}); !asRefused(err, &re) {
		t.Fatalf("approving an expired wave: %v", err)
	}
}

func asRefused(err error, re **RefusedError) bool { return errors.As(err, re) }

// A bake and its gate begin on a whole second, so that the readings fall on
// whole seconds too: Step Functions wakes the execution on whole seconds,
// and a reading due at .400 would otherwise be taken up to a second late,
// the end of a short bake's only reading before it.
func TestGates_BakeBeginsOnAWholeSecond(t *testing.T) {
	f := gatedFixture(t, nil)
	f.tick()
	f.advance(400 * time.Millisecond)
	f.settle() // a0 succeeds at +1m0.4s
	st := f.r.Stages[0]
	if st.Status != rollout.StageBaking || !st.BakeUntil.Equal(t0.Add(3*time.Minute+time.Second)) || !st.Gate.Since.Equal(t0.Add(time.Minute+time.Second)) {
		t.Fatalf("stage %+v gate %+v, want the bake from +1m1s to +3m1s", st, st.Gate)
	}
	f.wantDeadline(t0.Add(time.Minute + 31*time.Second)) // the first reading, on a whole second
}
