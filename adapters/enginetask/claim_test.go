package enginetask_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/storetest"
)

// countingExecutor counts the Starts of each delivery id. Its first Start
// runs during first (once) before it answers; the Starts of the agents in
// fail are refused.
type countingExecutor struct {
	executor.ManualExecutor
	first func(c executor.Call)
	fail  map[string]bool

	mu     sync.Mutex
	starts map[string]int
}

func (e *countingExecutor) Start(_ context.Context, c executor.Call) (string, error) {
	e.mu.Lock()
	if e.starts == nil {
		e.starts = map[string]int{}
	}
	e.starts[executor.DeliveryID(c.Rollout.ID, c.Target.AgentID, c.Target.Attempt, c.Operation)]++
	during := e.first
	e.first = nil
	e.mu.Unlock()
	if during != nil {
		during(c)
	}
	if e.fail[c.Target.AgentID] {
		return "", errors.New("the receiver answered 422")
	}
	return "job-" + c.Target.AgentID, nil
}

// wantStartsOnce fails unless every agent of ids got exactly one Start of
// attempt 1 from e.
func (e *countingExecutor) wantStartsOnce(t *testing.T, ids []string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	total := 0
	for _, id := range ids {
		n := e.starts[executor.DeliveryID("r1", id, 1, executor.OpStart)]
		if n != 1 {
			t.Errorf("agent %s: %d starts of its delivery, want 1", id, n)
		}
		total += n
	}
	for _, n := range e.starts {
		total -= n
	}
	if total != 0 {
		t.Errorf("starts %v, want one per target", e.starts)
	}
}

// versionRollout stores the pending version rollout r1 of n agents through
// the executor "counting", and a Evaluator at t0+1s with e.
func versionRollout(t *testing.T, n int, e *countingExecutor) (context.Context, *store.Store, enginetask.Evaluator, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	st := storetest.New(t)
	ids := pendingRolloutOf(t, ctx, st, n, policy.KindVersion, "counting")
	p := enginetask.Evaluator{Store: st, Executors: executor.Registry{"counting": e}, Clock: func() time.Time { return t0.Add(time.Second) }}
	return ctx, st, p, ids
}

// wantRefs fails unless every target of r1 is in progress with the
// executor's reference, or failed when its agent is in failed.
func wantRefs(t *testing.T, ctx context.Context, st *store.Store, failed map[string]bool) {
	t.Helper()
	_, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		switch {
		case failed[tg.AgentID]:
			if tg.Status != rollout.TargetFailed || !strings.Contains(tg.Reason, "the receiver answered 422") {
				t.Errorf("target %s is %s (%s), want failed by its Start", tg.AgentID, tg.Status, tg.Reason)
			}
		case tg.Status != rollout.TargetInProgress || tg.ExternalRef != "job-"+tg.AgentID:
			t.Errorf("target %s is %s with reference %q, want in progress with job-%s", tg.AgentID, tg.Status, tg.ExternalRef, tg.AgentID)
		}
	}
}

// The evaluation's save loses a race after its starts (here the execution stores
// itself on the rollout meanwhile; on the local stack an agent event stored
// the previous wave's target): the evaluation reads again and finds its targets
// claimed, in progress. It starts none of them a second time, and stores
// the references and the failure of the first starts.
func TestEvaluate_VersionSaveLostAfterTheStarts_StartsEachTargetOnce(t *testing.T) {
	e := &countingExecutor{fail: map[string]bool{"a01": true}}
	ctx, st, p, ids := versionRollout(t, 3, e)
	e.first = func(executor.Call) {
		if err := st.SetExecution(ctx, "r1", "arn:execution:r1", 1); err != nil {
			t.Error(err)
		}
	}
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	e.wantStartsOnce(t, ids)
	wantRefs(t, ctx, st, map[string]bool{"a01": true})
}

// Another evaluation reads the rollout while the evaluation's starts are under
// way (the state machine's evaluation and an agent event's, or an action): it
// finds the targets claimed in progress and starts none of them.
func TestEvaluate_VersionEvaluatedDuringTheStarts_StartsEachTargetOnce(t *testing.T) {
	e := &countingExecutor{}
	ctx, st, p, ids := versionRollout(t, 3, e)
	e.first = func(executor.Call) {
		if _, err := p.Evaluate(ctx, "r1"); err != nil {
			t.Error(err)
		}
	}
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	e.wantStartsOnce(t, ids)
	wantRefs(t, ctx, st, nil)
}

// claimRace is a store whose first claim (SaveTargets) comes second: the
// other evaluation runs to its end before it.
type claimRace struct {
	*store.Store
	other func()
	once  sync.Once
}

func (s *claimRace) SaveTargets(ctx context.Context, r rollout.Rollout, changed []rollout.Target) error {
	s.once.Do(s.other)
	return s.Store.SaveTargets(ctx, r, changed)
}

// Two evaluations decide the same starts; the one that claims second calls
// its executor for none of them, reads again and finds them in progress.
func TestEvaluate_VersionClaimLost_CallsNoStart(t *testing.T) {
	winner, loser := &countingExecutor{}, &countingExecutor{}
	ctx, st, p, ids := versionRollout(t, 3, winner)
	race := &claimRace{Store: st, other: func() {
		if _, err := p.Evaluate(ctx, "r1"); err != nil {
			t.Error(err)
		}
	}}
	lost := p
	lost.Store, lost.Executors = race, executor.Registry{"counting": loser}
	if _, err := lost.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	winner.wantStartsOnce(t, ids)
	if len(loser.starts) != 0 {
		t.Errorf("the evaluation that claimed second started %v", loser.starts)
	}
	wantRefs(t, ctx, st, nil)
}

// A claim whose evaluation ended before it stored the answer is left to that
// evaluation for claimGrace (5m; an evaluation lives two minutes at most), then started
// again, with the same delivery id.
func TestEvaluate_VersionClaimWithoutAnswer_IsStartedAgainAfterTheGrace(t *testing.T) {
	e := &countingExecutor{}
	ctx, st, p, ids := versionRollout(t, 2, e)
	died := p
	died.Store = diedAfterStarts{st}
	if _, err := died.Evaluate(ctx, "r1"); err == nil || !strings.Contains(err.Error(), "task timed out") {
		t.Fatalf("evaluation error %v, want the failed save", err)
	}
	_, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if tg.Status != rollout.TargetInProgress || tg.ExternalRef != "" {
			t.Fatalf("target %s is %s with reference %q, want claimed: in progress, no reference", tg.AgentID, tg.Status, tg.ExternalRef)
		}
	}
	for _, c := range []struct {
		after  time.Duration
		starts int
	}{
		{after: time.Minute, starts: 1},                 // the evaluation that claimed may still be under way
		{after: 5*time.Minute - time.Second, starts: 1}, // one second short of the grace
		{after: 5 * time.Minute, starts: 2},             // started again
		{after: 6 * time.Minute, starts: 2},             // answered: not again
	} {
		later := p
		later.Clock = func() time.Time { return t0.Add(time.Second + c.after) }
		if _, err := later.Evaluate(ctx, "r1"); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if n := e.starts[executor.DeliveryID("r1", id, 1, executor.OpStart)]; n != c.starts {
				t.Errorf("%s after the claim: %d starts of %s, want %d", c.after, n, id, c.starts)
			}
		}
	}
	wantRefs(t, ctx, st, nil)
}

// diedAfterStarts stores the claims and fails the evaluation's save, as a task
// that timed out between the two.
type diedAfterStarts struct{ *store.Store }

func (s diedAfterStarts) SaveEvaluation(context.Context, rollout.Rollout, []rollout.Target, ...notify.Event) error {
	return errors.New("task timed out")
}

// A claimed start is its evaluation's until the evaluation stores the answer: an agent
// event of its agent leaves the target alone (the evaluation's follow-up reads
// the agent after the save), so that the evaluation's save does not lose its
// race to it.
func TestEvaluateAgents_LeavesAClaimedStartToItsEvaluation(t *testing.T) {
	e := &countingExecutor{}
	ctx, st, p, ids := versionRollout(t, 2, e)
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	r, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ts, func(tg rollout.Target) bool { return tg.AgentID == ids[0] })
	claim := ts[i]
	claim.ExternalRef = "" // as an evaluation stores its claim before the executor answers
	if err := st.SaveTargets(ctx, r, []rollout.Target{claim}); err != nil {
		t.Fatal(err)
	}
	reportVersion(t, ctx, st, ids[0], "0.161.0", t0.Add(2*time.Second))
	reportVersion(t, ctx, st, ids[1], "0.161.0", t0.Add(2*time.Second))
	later := p
	later.Clock = func() time.Time { return t0.Add(3 * time.Second) }
	if err := later.EvaluateAgents(ctx, "r1", ids, nil); err != nil {
		t.Fatal(err)
	}
	_, ts, err = st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		want, version := rollout.TargetVerifying, tg.Version
		if tg.AgentID == ids[0] {
			want, version = rollout.TargetInProgress, claim.Version+1
		}
		if tg.Status != want || tg.Version != version {
			t.Errorf("target %s is %s at version %d, want %s at %d", tg.AgentID, tg.Status, tg.Version, want, version)
		}
	}
}

// reportVersion stores agent id running version since at, as the gateway
// does for a report.
func reportVersion(t *testing.T, ctx context.Context, st *store.Store, id, version string, at time.Time) {
	t.Helper()
	as, err := st.AgentsByID(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	a := as[id]
	a.ServiceVersion, a.VersionSince, a.LastSeen = version, at, at
	if err := st.RecordAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
}
