package enginetask_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/storetest"
)

// targetedRollout stores a running configuration rollout of n agents in one
// wave, every target started by a first whole evaluation.
func targetedRollout(t *testing.T, n int) (*store.Store, enginetask.Evaluator, []string, func(), context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	st := storetest.New(t)
	now := t0
	p := enginetask.Evaluator{Store: st, Clock: func() time.Time { return now }}
	ids := pendingRollout(t, ctx, st, n)
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	advance := func() { now = now.Add(time.Second) }
	advance()
	return st, p, ids, advance, ctx
}

// pendingRollout stores n online, healthy agents on h0 (a00, a01, ...) and
// a pending configuration rollout r1 of them toward h1, in one wave.
func pendingRollout(t *testing.T, ctx context.Context, st *store.Store, n int) []string {
	t.Helper()
	return pendingRolloutOf(t, ctx, st, n, policy.KindConfig, "")
}

// pendingRolloutOf is pendingRollout of kind k: a version rollout goes from
// 0.160.0 to 0.161.0 through executor ex.
func pendingRolloutOf(t *testing.T, ctx context.Context, st *store.Store, n int, k policy.Kind, ex string) []string {
	t.Helper()
	from, to := "h0", "h1"
	if k == policy.KindVersion {
		from, to = "0.160.0", "0.161.0"
	}
	var ids []string
	var cands []engine.Candidate
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("a%02d", i)
		ids = append(ids, id)
		cands = append(cands, engine.Candidate{AgentID: id, FromRef: from})
		if err := st.RecordAgent(ctx, agent.Agent{ID: id, Fleet: "edge", Online: true, LastSeen: t0, ServiceVersion: "0.160.0",
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "h0", Status: agent.ConfigApplied, Since: t0}}); err != nil {
			t.Fatal(err)
		}
	}
	snap := policy.Policy{Name: "test", Spec: policy.Spec{HealthWait: time.Minute}}.Snapshot(k)
	r, ts, err := engine.Create(engine.NewRollout{ID: "r1", Fleet: "edge", Kind: k, Policy: snap, ToRef: to,
		Origin: rollout.OriginGitOps, Candidates: cands, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	r.Executor = ex
	if err := st.CreateRollout(ctx, r, ts); err != nil {
		t.Fatal(err)
	}
	return ids
}

func report(t *testing.T, st *store.Store, ctx context.Context, id, status string, at time.Time) {
	t.Helper()
	a, err := st.AgentsByID(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	ag := a[id]
	ag.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: status, Since: at}
	ag.LastSeen = at // as the gateway stamps a stored change
	if err := st.RecordAgent(ctx, ag); err != nil {
		t.Fatal(err)
	}
}

// Two agents of fifty report APPLIED: their targets enter the health wait,
// read and written by key; the rollout item is read once and not written.
func TestEvaluateAgents_ReportsDecidedByTheirTargets(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 50)
	r0, err := st.GetRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	report(t, st, ctx, ids[3], agent.ConfigApplied, t0)
	report(t, st, ctx, ids[7], agent.ConfigApplied, t0)
	st.ResetUsage()
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[3], ids[7]}, nil); err != nil {
		t.Fatal(err)
	}
	u := st.Usage()
	r, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != r0.Version {
		t.Fatalf("rollout version %d, want %d: a targeted evaluation leaves the rollout alone", r.Version, r0.Version)
	}
	for _, tg := range ts {
		want := rollout.TargetInProgress
		if tg.AgentID == ids[3] || tg.AgentID == ids[7] {
			want = rollout.TargetVerifying
		}
		if tg.Status != want {
			t.Fatalf("target %s is %s, want %s", tg.AgentID, tg.Status, want)
		}
	}
	// read: the rollout, the 2 agents' targets by key, 2 agents, not the
	// 101 items of a whole evaluation nor the wave's 50 targets; written:
	// 2 targets and the check of the rollout's version
	if u.ItemsRead != 5 || u.ItemsWritten != 3 {
		t.Fatalf("usage %s, want 5 items read and 3 written", u)
	}
}

// An image of the batch that reports APPLIED moves its target to the
// health wait without a read of its agent (the stored agent here has not
// reported yet: the image alone decides).
func TestEvaluateAgents_AnImageMovesItsTargetToTheHealthWait(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 50)
	stored, err := st.AgentsByID(ctx, []string{ids[3]})
	if err != nil {
		t.Fatal(err)
	}
	img := stored[ids[3]]
	img.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigApplied, Since: t0}
	st.ResetUsage()
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[3]}, map[string]agent.Agent{ids[3]: img}); err != nil {
		t.Fatal(err)
	}
	u := st.Usage()
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[3]: rollout.TargetVerifying, ids[4]: rollout.TargetInProgress})
	if u.ItemsRead != 2 || u.ItemsWritten != 2 {
		t.Fatalf("usage %s, want 2 items read (the rollout, its target; no agent) and 2 written", u)
	}
}

// A health report of a target in its health wait is decided on its image
// too: the target stays in the wait without a read of its agent (a wave's
// restart reports, three a target, cost no agent read).
func TestEvaluateAgents_AHealthReportKeepsItsTargetInTheWaitOnItsImage(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 5)
	report(t, st, ctx, ids[2], agent.ConfigApplied, t0)
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[2]}, nil); err != nil {
		t.Fatal(err)
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[2]: rollout.TargetVerifying})
	stored, err := st.AgentsByID(ctx, []string{ids[2]})
	if err != nil {
		t.Fatal(err)
	}
	img := stored[ids[2]]
	img.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(2 * time.Second)}
	st.ResetUsage()
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[2]}, map[string]agent.Agent{ids[2]: img}); err != nil {
		t.Fatal(err)
	}
	u := st.Usage()
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[2]: rollout.TargetVerifying})
	if u.ItemsRead != 2 {
		t.Fatalf("usage %s, want 2 items read (the rollout, its target; no agent)", u)
	}
}

// An image that would fail a target in its health wait does not: the agent
// as stored decides, here healthy (the image is older than what is stored),
// so the target stays in the wait; stored unhealthy, it fails.
func TestEvaluateAgents_AnUnhealthyImageInTheWaitIsJudgedOnTheStoredAgent(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 3)
	for _, id := range ids[:2] {
		report(t, st, ctx, id, agent.ConfigApplied, t0)
	}
	if err := p.EvaluateAgents(ctx, "r1", ids[:2], nil); err != nil {
		t.Fatal(err)
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[0]: rollout.TargetVerifying, ids[1]: rollout.TargetVerifying})
	stored, err := st.AgentsByID(ctx, ids[:2])
	if err != nil {
		t.Fatal(err)
	}
	broken := agent.Health{Healthy: false, Status: "StatusRecoverableError", LastError: "exporter failed", ReportedAt: t0.Add(3 * time.Second)}
	stale := stored[ids[0]]
	stale.Health = broken
	now := stored[ids[1]]
	now.Health = broken
	if err := st.RecordAgent(ctx, now); err != nil {
		t.Fatal(err)
	}
	images := map[string]agent.Agent{ids[0]: stale, ids[1]: now}
	for _, id := range ids[:2] {
		if err := p.EvaluateAgents(ctx, "r1", []string{id}, images); err != nil {
			t.Fatal(err)
		}
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[0]: rollout.TargetVerifying, ids[1]: rollout.TargetFailed})
}

// An image may be older than the stored agent: it decides nothing but a
// target's move to its health wait. A target in its health wait is judged
// on its agent as stored: here the agent moved on to another configuration
// after the health wait's end, and its image from before (healthy on h1)
// would have made the target succeed. A target whose image says FAILED
// while the agent, as stored, applied is moved to its health wait.
func TestEvaluateAgents_AStaleImageDecidesNothingElse(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 3)
	before, err := st.AgentsByID(ctx, []string{ids[1]})
	if err != nil {
		t.Fatal(err)
	}
	report(t, st, ctx, ids[0], agent.ConfigApplied, t0)
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[0]}, nil); err != nil {
		t.Fatal(err)
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[0]: rollout.TargetVerifying})
	as, err := st.AgentsByID(ctx, []string{ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	stale, moved := as[ids[0]], as[ids[0]]
	moved.RemoteConfig = agent.RemoteConfigStatus{Hash: "h2", Status: agent.ConfigApplied, Since: t0.Add(time.Minute)}
	if err := st.RecordAgent(ctx, moved); err != nil {
		t.Fatal(err)
	}
	report(t, st, ctx, ids[1], agent.ConfigApplied, t0)
	failed := before[ids[1]]
	failed.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigFailed, Since: t0}
	p.Clock = func() time.Time { return t0.Add(2 * time.Minute) } // past the health wait (1m)
	for _, id := range ids[:2] {                                  // an evaluation each: one failure makes a whole evaluation
		images := map[string]agent.Agent{ids[0]: stale, ids[1]: failed}
		if err := p.EvaluateAgents(ctx, "r1", []string{id}, images); err != nil {
			t.Fatal(err)
		}
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{ids[0]: rollout.TargetFailed, ids[1]: rollout.TargetVerifying})
}

// A FAILED report finishes a target: the whole rollout decides (its
// threshold), so the rollout item is written too.
func TestEvaluateAgents_AFailureIsAWholeEvaluation(t *testing.T) {
	st, p, ids, _, ctx := targetedRollout(t, 3)
	r0, err := st.GetRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	report(t, st, ctx, ids[1], agent.ConfigFailed, t0.Add(time.Second))
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[1]}, nil); err != nil {
		t.Fatal(err)
	}
	r, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Version == r0.Version {
		t.Fatal("the rollout was not written: the failure was not decided by a whole evaluation")
	}
	for _, tg := range ts {
		if tg.AgentID == ids[1] && tg.Status != rollout.TargetFailed {
			t.Fatalf("target %s is %s, want failed", tg.AgentID, tg.Status)
		}
	}
}

// A targeted evaluation that lost its race to a whole evaluation reads again: the
// rollout moved on between the read and the write, and the report is still
// decided.
func TestEvaluateAgents_LostRaceReadsAgain(t *testing.T) {
	st, p, ids, advance, ctx := targetedRollout(t, 4)
	report(t, st, ctx, ids[0], agent.ConfigApplied, t0)
	racing := &racingStore{Store: st, before: func() {
		r, _, err := st.LoadRollout(ctx, "r1")
		if err == nil {
			err = st.SaveEvaluation(ctx, r, nil) // a whole evaluation stored meanwhile
		}
		if err != nil {
			t.Error(err)
		}
	}}
	p.Store = racing
	advance()
	if err := p.EvaluateAgents(ctx, "r1", []string{ids[0]}, nil); err != nil {
		t.Fatal(err)
	}
	if racing.saves != 2 {
		t.Fatalf("%d targeted saves, want 2 (one lost, one stored)", racing.saves)
	}
	_, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Status != rollout.TargetVerifying {
		t.Fatalf("target %s is %s, want verifying", ts[0].AgentID, ts[0].Status)
	}
}

// racingStore runs before ahead of the first SaveTargets.
type racingStore struct {
	*store.Store
	before func()
	saves  int
}

func (s *racingStore) SaveTargets(ctx context.Context, r rollout.Rollout, changed []rollout.Target) error {
	if s.saves++; s.saves == 1 {
		s.before()
	}
	return s.Store.SaveTargets(ctx, r, changed)
}

// Reports before the rollout begins are left to the execution's first evaluation:
// an agent-event evaluation would race it and carry out the same orders.
func TestEvaluateAgents_PendingRolloutIsLeftToItsExecution(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	p := enginetask.Evaluator{Store: st, Clock: func() time.Time { return t0 }}
	pendingRollout(t, ctx, st, 1)
	if err := p.EvaluateAgents(ctx, "r1", []string{"a00"}, nil); err != nil {
		t.Fatal(err)
	}
	got, gotTs, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != rollout.Pending || gotTs[0].Status != rollout.TargetPending {
		t.Fatalf("rollout %s, target %s: want both pending, untouched", got.Status, gotTs[0].Status)
	}
}

// A configuration's targets are stored in progress before their desired
// hash is set: the set is what pushes the configuration, so an agent that
// reports APPLIED at once finds its target in flight, and the agent-event
// evaluation its report sets off moves it to the health wait.
func TestEvaluate_ConfigTargetsAreStoredBeforeTheirHashIsSet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	pendingRollout(t, ctx, st, 3)
	quick := &applyingStore{Store: st, t: t, id: "a01"}
	p := enginetask.Evaluator{Store: quick, Clock: func() time.Time { return t0.Add(time.Second) }}
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if quick.orders != 1 || quick.storedBefore != 3 {
		t.Fatalf("%d desired-hash writes, %d of their targets stored in progress before: want 1 and 3", quick.orders, quick.storedBefore)
	}
	if err := p.EvaluateAgents(ctx, "r1", []string{"a01"}, nil); err != nil { // the report's agent event
		t.Fatal(err)
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{"a00": rollout.TargetInProgress, "a01": rollout.TargetVerifying, "a02": rollout.TargetInProgress})
}

// A start stored but not carried out (the desired-hash write failed) fails
// the evaluation and is ordered again by the next one; once every agent is asked
// for the hash, an evaluation writes nothing.
func TestEvaluate_ConfigStartStoredButNotSet_IsOrderedAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	ids := pendingRollout(t, ctx, st, 3)
	failing := &applyingStore{Store: st, t: t, fail: errors.New("throttled")}
	clock := func() time.Time { return t0.Add(time.Second) }
	if _, err := (enginetask.Evaluator{Store: failing, Clock: clock}).Evaluate(ctx, "r1"); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("evaluation error %v, want the failed write", err)
	}
	wantStatuses(t, ctx, st, map[string]rollout.TargetStatus{"a00": rollout.TargetInProgress, "a01": rollout.TargetInProgress, "a02": rollout.TargetInProgress})
	wantDesired(t, ctx, st, ids, "")
	again := &applyingStore{Store: st, t: t}
	p := enginetask.Evaluator{Store: again, Clock: clock}
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	wantDesired(t, ctx, st, ids, "h1")
	if _, err := p.Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if again.orders != 1 {
		t.Fatalf("%d desired-hash writes over two evaluations, want 1", again.orders)
	}
}

// A version's starts are carried out before the evaluation is stored (an
// executor's Start returns what the target stores). An agent that reports
// the new version while they are, before its target is stored in progress,
// is read by the evaluation that follows the starts: its target is stored
// verifying by the same call, not left in progress until the state
// machine's next evaluation.
func TestEvaluate_VersionReportDuringTheStartsIsEvaluated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	pendingRolloutOf(t, ctx, st, 3, policy.KindVersion, "reporting")
	ex := &reportingExecutor{st: st, t: t, id: "a01"}
	p := enginetask.Evaluator{Store: st, Executors: executor.Registry{"reporting": ex}, Clock: func() time.Time { return t0.Add(time.Second) }}
	passed, err := p.Evaluate(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]rollout.TargetStatus{"a00": rollout.TargetInProgress, "a01": rollout.TargetVerifying, "a02": rollout.TargetInProgress}
	for _, tg := range passed.Targets {
		if tg.Status != want[tg.AgentID] {
			t.Fatalf("passed target %s is %s, want %s", tg.AgentID, tg.Status, want[tg.AgentID])
		}
	}
	wantStatuses(t, ctx, st, want)
	if ex.starts != 3 {
		t.Fatalf("%d starts, want 3: the follow-up starts nothing", ex.starts)
	}
}

// reportingExecutor's Start makes agent id report the version at once.
type reportingExecutor struct {
	executor.ManualExecutor
	st     *store.Store
	t      *testing.T
	id     string
	starts int
}

func (e *reportingExecutor) Start(ctx context.Context, c executor.Call) (string, error) {
	e.starts++
	if c.Target.AgentID == e.id {
		as, err := e.st.AgentsByID(ctx, []string{e.id})
		if err != nil {
			return "", err
		}
		a := as[e.id]
		a.ServiceVersion, a.VersionSince, a.LastSeen = c.Version, t0.Add(time.Second), t0.Add(time.Second)
		if err := e.st.RecordAgent(ctx, a); err != nil {
			return "", err
		}
	}
	return "job-" + c.Target.AgentID, nil
}

// A configuration's resets (a rollback's desired hashes back to where the
// targets started) are carried out before the evaluation is stored: no later evaluation
// orders a stored reset again, so a failed one stores nothing, and the
// retried action rolls back.
func TestAct_ConfigResetsAreCarriedOutBeforeTheSave(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	ids := pendingRollout(t, ctx, st, 2)
	clock := func() time.Time { return t0.Add(time.Second) }
	if _, err := (enginetask.Evaluator{Store: st, Clock: clock}).Evaluate(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	rollback := engine.Request{Action: engine.ActionRollback, Actor: "op"}
	failing := &applyingStore{Store: st, t: t, fail: errors.New("throttled")}
	if _, err := (enginetask.Evaluator{Store: failing, Clock: clock}).Act(ctx, "r1", rollback); err == nil {
		t.Fatal("the rollback stored although its resets failed")
	}
	if r, err := st.GetRollout(ctx, "r1"); err != nil || r.Status != rollout.Running {
		t.Fatalf("rollout %s (%v) after a failed reset, want running: nothing stored", r.Status, err)
	}
	wantDesired(t, ctx, st, ids, "h1")
	if _, err := (enginetask.Evaluator{Store: st, Clock: clock}).Act(ctx, "r1", rollback); err != nil {
		t.Fatal(err)
	}
	if r, err := st.GetRollout(ctx, "r1"); err != nil || (r.Status != rollout.RollingBack && r.Status != rollout.RolledBack) {
		t.Fatalf("rollout %s (%v), want it rolled back (its agents still report the old hash)", r.Status, err)
	}
	wantDesired(t, ctx, st, ids, "h0")
}

func wantStatuses(t *testing.T, ctx context.Context, st *store.Store, want map[string]rollout.TargetStatus) {
	t.Helper()
	_, ts, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if w, ok := want[tg.AgentID]; ok && tg.Status != w {
			t.Fatalf("target %s is %s, want %s", tg.AgentID, tg.Status, w)
		}
	}
}

func wantDesired(t *testing.T, ctx context.Context, st *store.Store, ids []string, hash string) {
	t.Helper()
	as, err := st.AgentsByID(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if as[id].DesiredHash != hash {
			t.Fatalf("agent %s is asked for %q, want %q", id, as[id].DesiredHash, hash)
		}
	}
}

// applyingStore counts the desired-hash writes and how many of their
// agents' targets were stored in progress when each began; with fail it
// fails them, and with id that agent reports APPLIED for the new hash as
// soon as its desired hash is set.
type applyingStore struct {
	*store.Store
	t            *testing.T
	id           string
	fail         error
	orders       int
	storedBefore int
}

// SetDesiredHashOver goes through SetDesiredHash, so that its hooks see
// every desired-hash write.
func (s *applyingStore) SetDesiredHashOver(ctx context.Context, ids []string, hash string, _ map[string]agent.Agent, _ any) error {
	return s.SetDesiredHash(ctx, ids, hash)
}

func (s *applyingStore) SetDesiredHash(ctx context.Context, ids []string, hash string) error {
	s.orders++
	if _, ts, err := s.Store.LoadRollout(ctx, "r1"); err == nil {
		asked := map[string]bool{}
		for _, id := range ids {
			asked[id] = true
		}
		for _, tg := range ts {
			if asked[tg.AgentID] && tg.Status == rollout.TargetInProgress {
				s.storedBefore++
			}
		}
	}
	if s.fail != nil {
		return s.fail
	}
	if err := s.Store.SetDesiredHash(ctx, ids, hash); err != nil {
		return err
	}
	if s.id != "" {
		report(s.t, s.Store, ctx, s.id, agent.ConfigApplied, t0.Add(time.Second))
	}
	return nil
}

// loadCounting counts the whole evaluations' reads of a rollout with all its
// targets.
type loadCounting struct {
	*store.Store
	loads int
}

func (s *loadCounting) LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error) {
	s.loads++
	return s.Store.LoadRollout(ctx, id)
}

// A batch whose agents have no target in a wave in flight still lets the
// rollout decide when it must: a rollout rolling back gets a whole evaluation
// (the next unit of its rollback may be waiting for those agents, whose
// targets are in a completed wave).
func TestEvaluateAgents_NoTargetInFlight_RollingBackIsAWholeEvaluation(t *testing.T) {
	st, p, _, _, ctx := targetedRollout(t, 2)
	r, _, err := st.LoadRollout(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	r.Status, r.RollbackStartedAt = rollout.RollingBack, &t0
	if err := st.SaveEvaluation(ctx, r, nil); err != nil {
		t.Fatal(err)
	}
	counting := &loadCounting{Store: st}
	p.Store = counting
	if err := p.EvaluateAgents(ctx, "r1", []string{"elsewhere"}, map[string]agent.Agent{}); err != nil {
		t.Fatal(err)
	}
	if counting.loads == 0 {
		t.Fatal("no whole evaluation: a rollout rolling back must decide on every agent event")
	}
}
