package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// Where features meet: each test here reproduces a defect found where two
// rules of the engine combine (stragglers and gates, approvals and empty
// waves, retries and stages, gates and pass outcomes, rejections and
// skipped waves, rollback-all and its order).

// A straggler joining while a stage bakes keeps that stage's gate: its
// readings (a red one included) and its schedule. Before, the stages were
// rebuilt from the layout and the baking stage passed at the end of its
// bake with no reading at all.
func TestAddStragglers_DuringABake_KeepTheGate(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) { s.Health.FailuresToStop = 2 })
	f.tick()
	f.settle() // the canary's stage bakes
	f.toNext()
	f.read(true) // one red reading of two allowed
	before := f.r.Stages[0]
	if before.Status != rollout.StageBaking || before.Gate == nil || before.Gate.Consecutive != 1 {
		t.Fatalf("canary stage %+v, want baking with one red reading", before)
	}
	r, late := AddStragglers(f.r, []Candidate{{AgentID: "late", FromRef: "h-old"}})
	if !reflect.DeepEqual(r.Stages[0], before) {
		t.Fatalf("the baking stage changed when a straggler joined another stage:\n got %+v\nwant %+v", r.Stages[0], before)
	}
	f.r = r
	f.ts = append(f.ts, late...)
	f.agents["late"] = agent.Agent{ID: "late", Fleet: "edge", Online: true,
		Attributes: map[string]string{"cloud.region": "r2", "cloud.availability_zone": "r2a"},
		Health:     agent.Health{Healthy: true, Status: agent.StatusOK}, RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied}}
	f.tick()
	f.toNext()
	f.read(true) // the second red reading in a row fails the stage
	f.wantRollout(rollout.Paused)
	if st := f.r.Stages[0]; st.Status != rollout.StageFailed {
		t.Fatalf("canary stage %s, want failed by its second red reading", st.Status)
	}
}

// Stragglers keep the batch gates and the cleared batches of the passes
// that have them, and the held mark of a frozen stage.
func TestAddStragglers_KeepPassGatesAndHolds(t *testing.T) {
	f := stagedFixture(t)
	f.r.Stages[1].Passes[0].Cleared = 1
	f.r.Stages[1].Passes[0].Gate = &rollout.BatchGate{Batch: 0}
	f.r.Stages[1].Held, f.r.Stages[1].LastRed = "freeze x", "probe red"
	r, _ := AddStragglers(f.r, []Candidate{{AgentID: "late", FromRef: "h-old"}})
	if got := r.Stages[1]; got.Passes[0].Cleared != 1 || got.Passes[0].Gate == nil || got.Held != "freeze x" || got.LastRed != "probe red" {
		t.Fatalf("stage 1 after stragglers %+v", got)
	}
}

// approvalsBetween names the wave after which a person decides; an empty
// wave between it and the next one with targets does not take the
// approval with it when it is skipped.
func TestApprovals_BetweenWaves_AcrossAnEmptyWave(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.Waves = []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "eu", Selector: &selector.Selector{MatchAttributes: map[string]string{"region": "eu"}}},
			{Name: "rest", Percent: 100},
		}
		s.ApprovalsBetween = []string{"canary"}
		s.MaxConcurrent = intp(0)
	})
	f := newFixture(t, policy.KindConfig, s, []string{"a0"}, nil, []string{"a1", "a2"})
	f.tick()
	f.settle()
	f.tick()
	f.wantWave(1, rollout.WaveSkipped)
	f.wantRollout(rollout.WaitingApproval)
	f.wantWave(2, rollout.WaveWaitingApproval)
	f.wantTarget("a1", rollout.TargetPending)
	if err := f.act(Request{Action: ActionApprove, Wave: 2, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantPass(passExpectation{starts: []string{"a1", "a2"},
		changed: map[string]rollout.TargetStatus{"a1": rollout.TargetInProgress, "a2": rollout.TargetInProgress}, deadline: f.now.Add(10 * time.Minute)})
}

// retry-failed runs a failed target of a stage that had passed (its
// failure stayed below the threshold): the stage runs again, and the wave
// and the rollout complete only once the target is final.
func TestRetryFailed_TargetOfAPassedStage_RunsAgain(t *testing.T) {
	f := stagedFixture(t)
	f.r.Policy.FailureThreshold = policy.Threshold{MaxFailed: 3}
	f.tick()
	f.driveUntil(func() bool { return f.r.Stages[2].Status == rollout.StageRunning }, func(id string) bool { return id == "a1" }, nil)
	f.wantTarget("a1", rollout.TargetFailed)
	if st := f.r.Stages[1]; st.Status != rollout.StagePassed {
		t.Fatalf("stage %s is %s, want passed with one failure below the threshold", st.Name, st.Status)
	}
	if err := f.act(Request{Action: ActionRetryFailed, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantPass(passExpectation{starts: []string{"a1"}, changed: map[string]rollout.TargetStatus{"a1": rollout.TargetInProgress},
		deadline: f.now.Add(10 * time.Minute)})
	f.wantRollout(rollout.Running)
	if st := f.r.Stages[f.target("a1").Stage]; st.Status != rollout.StageRunning {
		t.Fatalf("stage %s is %s, want running again for its retried target", st.Name, st.Status)
	}
	f.drive(nil, nil)
	f.wantTarget("a1", rollout.TargetSucceeded)
	f.wantRollout(rollout.Completed)
}

// drive runs the rollout while it is running: targets in flight report
// success (or failure, when fail says so) and finish their health wait,
// gate readings are green (or red, when red says so for the stage), and
// the clock moves to each next deadline.
func (f *fixture) drive(fail func(id string) bool, red func(stage int) bool) {
	f.t.Helper()
	f.driveUntil(func() bool { return false }, fail, red)
}

// driveUntil drives the rollout until stop says so.
func (f *fixture) driveUntil(stop func() bool, fail func(id string) bool, red func(stage int) bool) {
	f.t.Helper()
	for i := 0; i < 200 && f.r.Status == rollout.Running && !stop(); i++ {
		switch {
		case len(f.last.GatesDue) > 0:
			f.read(red != nil && red(f.last.GatesDue[0].Stage))
		case len(f.inFlightIDs()) > 0:
			for _, id := range f.inFlightIDs() {
				if fail != nil && fail(id) {
					f.update(id, func(a *agent.Agent) {
						a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
					})
					continue
				}
				f.apply(id)
			}
			f.tick()
			f.advance(time.Minute)
			f.tick()
		case !f.last.NextDeadline.IsZero():
			f.toNext()
		default:
			return
		}
	}
}

// A stage whose gate turned red fails every pass of it, although none of
// their targets failed; a batch gate red fails its own pass.
func TestPassOutcome_RedGateFailsThePass(t *testing.T) {
	f := gatedFixture(t, nil)
	f.tick()
	f.settle()
	f.toNext()
	f.read(true)
	if got := f.r.Stages[0].Passes[0].Outcome; got != rollout.StageFailed {
		t.Fatalf("canary pass outcome %q after a red stage gate, want failed", got)
	}
}

// Passes of a stage ended by abort get an outcome: failed when one of
// their targets failed, else cancelled; passes that never began get none.
func TestPassOutcome_AbortEndsThePassesOfTheRunningStage(t *testing.T) {
	f := stagedFixture(t)
	f.tick()
	f.settle() // the canary passed; rest/r1a runs
	if err := f.act(Request{Action: ActionAbort, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	if got := f.r.Stages[1].Passes[0].Outcome; got != rollout.PassCancelled {
		t.Fatalf("running pass outcome %q after abort, want %s", got, rollout.PassCancelled)
	}
	if got := f.r.Stages[2].Passes[0].Outcome; got != "" {
		t.Fatalf("pass that never began has outcome %q", got)
	}
}

// A rejection with rollback-wave in a rollout without stages rolls back the
// last wave that ran, not a skipped one before the rejected wave.
func TestApprovals_RejectRollbackWave_SkipsEmptyWaves(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.Waves = []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "eu", Selector: &selector.Selector{MatchAttributes: map[string]string{"region": "eu"}}},
			{Name: "rest", Percent: 100, RequireApproval: true},
		}
		s.OnFailure = policy.OnFailureRollbackWave
		s.MaxConcurrent = intp(0)
	})
	f := newFixture(t, policy.KindConfig, s, []string{"a0"}, nil, []string{"a1"})
	f.tick()
	f.settle()
	f.tick()
	f.wantRollout(rollout.WaitingApproval)
	if err := f.act(Request{Action: ActionReject, Wave: 2, Actor: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.RollingBack)
	f.wantPass(passExpectation{resets: []string{"a0"}, // the canary, the last wave that ran
		changed: map[string]rollout.TargetStatus{"a0": rollout.TargetSucceeded, "a1": rollout.TargetCancelled},
		events:  []string{"rollout.rejected", "rollout.rolling_back"}, deadline: f.now.Add(10 * time.Minute)})
}

// rollback-all returns the failed stage first, then the stages that had
// passed, nearest first, one stage at a time.
func TestRollbackAll_StagesInReverseOrder(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) { s.OnFailure = policy.OnFailureRollbackAll })
	f.tick()
	f.drive(nil, func(stage int) bool { return stage == 2 }) // the last stage's gate is red
	f.wantRollout(rollout.RollingBack)
	var order []int
	for f.r.Status == rollout.RollingBack {
		for _, id := range resets(f.last.Orders) {
			order = append(order, f.target(id).Stage)
			f.reportFrom(id)
		}
		f.tick()
	}
	if !slices.Equal(order, []int{2, 2, 1, 1, 0}) {
		t.Fatalf("stages reset in the order %v, want 2, 2, 1, 1, 0", order)
	}
	f.wantRollout(rollout.RolledBack)
}
