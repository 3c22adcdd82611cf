package engine

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// stagedFixture is a configuration rollout created through Create with a
// policy that splits the rest wave by zone: a canary wave (a0), then
// rest/r1a (a1, a2) and rest/r1b (a3, a4), batches of one, a 10-minute bake
// after each rest stage.
func stagedFixture(t *testing.T) *fixture { return stagedFixtureOn(t, "") }

func stagedFixtureOn(t *testing.T, onFailure policy.OnFailure) *fixture {
	t.Helper()
	spec := policy.Spec{OnFailure: onFailure,
		Waves: []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "rest", Percent: 100, By: policy.SplitZone, Bake: 10 * time.Minute, MaxUnavailable: policy.Amount{Value: 1}},
		},
		MaxConcurrent: intp(0), HealthWait: time.Minute,
	}
	snap := policy.Policy{Name: "zones", Spec: spec}.Snapshot(policy.KindConfig)
	zones := map[string]string{"a0": "r1a", "a1": "r1a", "a2": "r1a", "a3": "r1b", "a4": "r1b"}
	return createdFixture(t, snap, []string{"a0", "a1", "a2", "a3", "a4"}, func(id string) map[string]string {
		return map[string]string{"cloud.region": "r1", "cloud.availability_zone": zones[id]}
	})
}

// createdFixture is a configuration rollout made by Create for the agents
// ids, online and healthy on h-old with the attributes attrs gives them; a0
// is labelled the canary. The rollout's creator is user:alice.
func createdFixture(t *testing.T, snap policy.Snapshot, ids []string, attrs func(id string) map[string]string) *fixture {
	t.Helper()
	f := &fixture{t: t, now: t0, agents: map[string]agent.Agent{}}
	var cands []Candidate
	for _, id := range ids {
		a := attrs(id)
		if id == "a0" {
			a["labels.wave"] = "canary"
		}
		cands = append(cands, Candidate{AgentID: id, Attributes: selector.Map(a), FromRef: "h-old"})
		f.agents[id] = agent.Agent{ID: id, Fleet: "edge", Online: true, Attributes: a,
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Hour)},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
	}
	r, ts, err := Create(NewRollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Policy: snap, ToRef: "h-new", Candidates: cands, Now: t0, CreatedBy: "user:alice"})
	if err != nil {
		t.Fatal(err)
	}
	f.r, f.ts = r, ts
	return f
}

// inFlightIDs are the targets in progress or verifying, sorted.
func (f *fixture) inFlightIDs() []string {
	var ids []string
	for _, t := range f.ts {
		if t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying {
			ids = append(ids, t.AgentID)
		}
	}
	return ids
}

// settle lets every target in flight apply and finishes its health wait.
func (f *fixture) settle() {
	f.t.Helper()
	for _, id := range f.inFlightIDs() {
		f.apply(id)
	}
	f.tick()
	f.advance(time.Minute)
	f.tick()
}

func TestTick_Stages_BatchesOneAfterTheOtherThenBake(t *testing.T) {
	f := stagedFixture(t)
	if got := len(f.r.Stages); got != 3 || f.r.Stages[1].Name != "rest/r1a" || f.r.Stages[2].Name != "rest/r1b" {
		t.Fatalf("stages %+v, want canary, rest/r1a, rest/r1b", f.r.Stages)
	}
	f.tick()
	f.wantPass(passExpectation{starts: []string{"a0"}, changed: map[string]rollout.TargetStatus{"a0": rollout.TargetInProgress},
		events: []string{"rollout.started", "rollout.stage_started"}, deadline: t0.Add(10 * time.Minute)}) // applyTimeout of a0
	f.settle() // the canary succeeds; its stage has no bake; rest/r1a starts its first batch
	if got := f.inFlightIDs(); len(got) != 1 || f.target(got[0]).Stage != 1 {
		t.Fatalf("in flight %v, want one target of rest/r1a (batches of one)", got)
	}
	first := f.inFlightIDs()[0]
	f.settle() // batch 0 done: batch 1 of the same pass
	if got := f.inFlightIDs(); len(got) != 1 || got[0] == first || f.target(got[0]).Stage != 1 {
		t.Fatalf("in flight %v, want the other target of rest/r1a", got)
	}
	f.settle() // rest/r1a is final: it bakes, nothing of rest/r1b starts
	st := f.r.Stages[1]
	if st.Status != rollout.StageBaking || st.BakeUntil == nil || !st.BakeUntil.Equal(f.now.Add(10*time.Minute)) {
		t.Fatalf("stage rest/r1a %+v, want baking until now + 10m", st)
	}
	bakeUntil := *st.BakeUntil
	f.wantDeadline(bakeUntil)
	f.advance(5 * time.Minute)
	f.tick()
	f.tick() // a retried pass does not move the bake's end
	if got := f.r.Stages[1].BakeUntil; !got.Equal(bakeUntil) || len(f.inFlightIDs()) != 0 {
		t.Fatalf("bake until %v (was %v), in flight %v: the bake must neither restart nor let rest/r1b begin", got, bakeUntil, f.inFlightIDs())
	}
	f.now = bakeUntil
	f.tick()
	next := f.inFlightIDs()
	if len(next) != 1 {
		t.Fatalf("in flight %v after the bake, want one target", next)
	}
	f.wantPass(passExpectation{starts: next, changed: map[string]rollout.TargetStatus{next[0]: rollout.TargetInProgress},
		events: []string{"rollout.stage_passed", "rollout.stage_started"}, deadline: bakeUntil.Add(10 * time.Minute)})
	if f.r.Stages[1].Status != rollout.StagePassed || len(f.inFlightIDs()) != 1 || f.target(f.inFlightIDs()[0]).Stage != 2 {
		t.Fatalf("after the bake: stages %+v, in flight %v; want rest/r1a passed and rest/r1b's first batch", f.r.Stages, f.inFlightIDs())
	}
	f.settle()
	f.settle()
	f.advance(10 * time.Minute)
	f.tick()
	f.wantRollout(rollout.Completed)
	if p, n := f.r.StageProgress(); p != 3 || n != 3 {
		t.Fatalf("stage progress %d/%d, want 3/3", p, n)
	}
}

func TestTick_Stages_FailureStopsTheFollowingStages(t *testing.T) {
	f := stagedFixture(t)
	f.tick()
	f.settle() // canary done; rest/r1a batch 0 starts
	failing := f.inFlightIDs()[0]
	f.update(failing, func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
	})
	f.tick()
	f.wantRollout(rollout.Paused)
	if f.r.Stages[1].Status != rollout.StageFailed || f.r.Stages[2].Status != rollout.StagePending {
		t.Fatalf("stages %+v, want rest/r1a failed and rest/r1b pending", f.r.Stages)
	}
	for _, id := range []string{"a3", "a4"} {
		f.wantTarget(id, rollout.TargetPending)
	}
}

// A wave split by zone whose agents lack the zone attribute blocks the
// rollout's creation with a clear error; it never drops them silently.
func TestCreate_Stages_MissingZoneIsAnError(t *testing.T) {
	spec := policy.Spec{Waves: []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone}}}
	snap := policy.Policy{Name: "zones", Spec: spec}.Snapshot(policy.KindConfig)
	cands := []Candidate{{AgentID: "a0", Attributes: selector.Map{"cloud.region": "r1"}}}
	if _, _, err := Create(NewRollout{ID: "r1", Kind: policy.KindConfig, Policy: snap, ToRef: "h", Candidates: cands, Now: t0}); err == nil {
		t.Fatal("agents without a zone in a wave split by zone must be an error")
	}
}

// Stragglers of a rollout with stages join the last pass of the last stage,
// in a new batch; a stage that had passed runs again for them.
func TestAddStragglers_Stages_JoinTheLastPass(t *testing.T) {
	f := stagedFixture(t)
	r, late := AddStragglers(f.r, []Candidate{{AgentID: "late", FromRef: "h-old"}})
	if len(late) != 1 || late[0].Stage != 2 || late[0].Batch != 2 {
		t.Fatalf("straggler %+v, want stage 2 (rest/r1b), batch 2 after its two batches", late)
	}
	if p := r.Stages[2].Passes[0]; p.Size != 3 || p.Batches != 3 {
		t.Fatalf("last pass %+v, want 3 targets in 3 batches", p)
	}
}

// reportFrom makes an agent report its from hash again, as one that was
// reset would.
func (f *fixture) reportFrom(id string) {
	f.update(id, func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied, Since: f.now}
	})
}

func resets(os []Order) []string {
	var ids []string
	for _, o := range os {
		if o.Kind == OrderReset {
			ids = append(ids, o.AgentID)
		}
	}
	return ids
}

// rollback-wave returns the failed stage and leaves the stages that passed
// on the new state; rollback-all then returns those too, nearest first, one
// stage at a time.
func TestTick_Stages_RollbackWaveAndAll(t *testing.T) {
	for _, mode := range []policy.OnFailure{policy.OnFailureRollbackWave, policy.OnFailureRollbackAll} {
		t.Run(string(mode), func(t *testing.T) {
			f := stagedFixtureOn(t, mode)
			f.tick()
			f.settle() // the canary a0 passes; rest/r1a's first batch starts
			failing := f.inFlightIDs()[0]
			f.update(failing, func(a *agent.Agent) {
				a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
			})
			f.tick()
			f.wantRollout(rollout.RollingBack)
			if got := resets(f.last.Orders); len(got) != 1 || got[0] != failing {
				t.Fatalf("reset orders %v, want only the failed stage's started target %s", got, failing)
			}
			for _, id := range []string{"a3", "a4"} {
				f.wantTarget(id, rollout.TargetCancelled)
			}
			f.wantTarget("a0", rollout.TargetSucceeded)
			f.reportFrom(failing)
			f.tick()
			f.wantTarget(failing, rollout.TargetRolledBack)
			if mode == policy.OnFailureRollbackWave {
				f.wantRollout(rollout.RolledBack)
				f.wantTarget("a0", rollout.TargetSucceeded) // the canary's stage passed: it stays on the new configuration
				return
			}
			// rollback-all: the canary's stage follows, once the failed one is back.
			if got := resets(f.last.Orders); len(got) != 1 || got[0] != "a0" {
				t.Fatalf("reset orders %v, want the canary a0 next", got)
			}
			f.wantRollout(rollout.RollingBack)
			f.reportFrom("a0")
			f.tick()
			f.wantTarget("a0", rollout.TargetRolledBack)
			f.wantRollout(rollout.RolledBack)
		})
	}
}

// An offline agent alone in the first batch of a pass is skipped when its
// grace period ends; the next batch starts in the same pass, since nothing
// else would wake the rollout for it.
func TestTick_Stages_SkipEndsBatch_NextBatchStartsAtOnce(t *testing.T) {
	f := stagedFixture(t)
	var first, second string
	for _, tg := range f.ts {
		switch {
		case tg.Stage == 1 && tg.Batch == 0:
			first = tg.AgentID
		case tg.Stage == 1 && tg.Batch == 1:
			second = tg.AgentID
		}
	}
	f.update(first, func(a *agent.Agent) { a.Online = false })
	f.tick()
	f.settle() // the canary succeeds; rest/r1a begins, its first batch's agent is offline
	if got := f.inFlightIDs(); len(got) != 0 {
		t.Fatalf("in flight %v, want none: the first batch's agent is offline", got)
	}
	stageStart := *f.r.Stages[1].StartedAt
	f.wantDeadline(stageStart.Add(f.r.Policy.OfflineGracePeriod))
	f.now = stageStart.Add(f.r.Policy.OfflineGracePeriod)
	f.tick()
	f.wantTarget(first, rollout.TargetSkipped)
	if got := f.inFlightIDs(); len(got) != 1 || got[0] != second {
		t.Fatalf("in flight %v, want %s of the next batch at once", got, second)
	}
}

// onFailure rollback in a rollout with stages resets every started
// target at once, those of the stages that passed included (the canary's),
// and cancels the targets that never started.
func TestTick_Stages_Rollback_ResetsEveryStartedTarget(t *testing.T) {
	f := stagedFixtureOn(t, policy.OnFailureRollback)
	f.tick()
	f.settle() // the canary a0 passes; rest/r1a's first batch starts
	if f.r.Stages[0].Status != rollout.StagePassed {
		t.Fatalf("stages %+v, want the canary's passed", f.r.Stages)
	}
	failing := f.inFlightIDs()[0]
	f.update(failing, func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
	})
	f.tick()
	f.wantRollout(rollout.RollingBack)
	got := resets(f.last.Orders)
	sort.Strings(got)
	want := []string{"a0", failing}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("reset orders %v, want every started target %v at once, the passed canary's included", got, want)
	}
	for _, tg := range f.ts {
		if tg.AgentID != "a0" && tg.AgentID != failing {
			f.wantTarget(tg.AgentID, rollout.TargetCancelled)
		}
	}
	f.reportFrom("a0")
	f.reportFrom(failing)
	f.tick()
	f.wantTarget("a0", rollout.TargetRolledBack)
	f.wantTarget(failing, rollout.TargetRolledBack)
	f.wantRollout(rollout.RolledBack)
}

// Each pass finishes with its own outcome, not its stage's: in a stage of
// two regions side by side, the pass with a failed target failed and the
// other passed, although the stage passed (the failure stayed below the
// threshold).
func TestTick_Stages_PassOutcome_IsThePasssOwn(t *testing.T) {
	spec := policy.Spec{
		Waves:         []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone, ParallelRegions: 2, MaxUnavailable: policy.Amount{Value: 2}}},
		MaxConcurrent: intp(0), HealthWait: time.Minute, FailureThreshold: policy.Threshold{MaxFailed: 2},
	}
	snap := policy.Policy{Name: "regions", Spec: spec}.Snapshot(policy.KindConfig)
	region := map[string]string{"b0": "r1", "b1": "r1", "b2": "r2", "b3": "r2"}
	f := createdFixture(t, snap, []string{"b0", "b1", "b2", "b3"}, func(id string) map[string]string {
		return map[string]string{"cloud.region": region[id], "cloud.availability_zone": region[id] + "a"}
	})
	if len(f.r.Stages) != 1 || len(f.r.Stages[0].Passes) != 2 {
		t.Fatalf("stages %+v, want one stage of two passes", f.r.Stages)
	}
	f.tick()
	f.update("b0", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
	})
	f.tick()
	f.wantTarget("b0", rollout.TargetFailed)
	f.settle()
	st := f.r.Stages[0]
	if st.Status != rollout.StagePassed {
		t.Fatalf("stage %+v, want passed", st)
	}
	outcomes := map[string]rollout.StageStatus{}
	for _, p := range st.Passes {
		outcomes[p.Region] = p.Outcome
	}
	if outcomes["r1"] != rollout.StageFailed || outcomes["r2"] != rollout.StagePassed {
		t.Fatalf("pass outcomes %v, want r1 failed (b0 failed), r2 passed", outcomes)
	}
}

// A stage that stragglers reopen keeps the outcomes of its passes, so that
// its passing again does not count them twice; a retry of a failed wave
// clears them, since its passes run again.
func TestTick_Stages_PassOutcome_KeptForStragglers_ClearedByRetry(t *testing.T) {
	f := stagedFixture(t)
	f.tick()
	f.settle()
	f.settle()
	f.settle() // rest/r1a bakes
	f.advance(10 * time.Minute)
	f.tick()
	f.settle()
	f.settle()
	f.advance(10 * time.Minute)
	f.tick()
	f.wantRollout(rollout.Completed)
	if p := f.r.Stages[2].Passes[0]; p.Outcome != rollout.StagePassed {
		t.Fatalf("last pass %+v, want passed", p)
	}
	r, _ := AddStragglers(f.r, []Candidate{{AgentID: "late", FromRef: "h-old"}})
	if st := r.Stages[2]; st.Status != rollout.StageRunning || st.Passes[0].Outcome != rollout.StagePassed {
		t.Fatalf("reopened stage %+v, want running with its pass's outcome kept", st)
	}

	g := stagedFixture(t)
	g.tick()
	g.settle()
	failing := g.inFlightIDs()[0]
	g.update(failing, func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: g.now}
	})
	g.tick()
	g.wantRollout(rollout.Paused)
	if p := g.r.Stages[1].Passes[0]; p.Outcome != rollout.StageFailed {
		t.Fatalf("failed pass %+v, want failed", p)
	}
	if err := g.act(Request{Action: ActionRetryFailed, Actor: "Bob", ActorID: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	if p := g.r.Stages[1].Passes[0]; p.Outcome != "" {
		t.Fatalf("retried pass %+v, want no outcome until it finishes again", p)
	}
}
