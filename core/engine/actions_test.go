package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

func TestAllowed_EveryActionAndStatus(t *testing.T) {
	all := []rollout.Status{rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Completed,
		rollout.Failed, rollout.Aborted, rollout.RollingBack, rollout.RolledBack, rollout.Superseded}
	want := map[Action]string{ // statuses, by initial, in which the action is allowed
		ActionPause:       "pending running waiting_approval",
		ActionResume:      "paused",
		ActionApprove:     "pending running waiting_approval paused",
		ActionAbort:       "pending running waiting_approval paused failed rolling_back",
		ActionRollback:    "pending running waiting_approval paused failed",
		ActionRetryFailed: "running waiting_approval paused failed",
		ActionReject:      "pending running waiting_approval paused",
	}
	for _, a := range Actions {
		got := ""
		for _, s := range all {
			if Allowed(a, s) {
				if got != "" {
					got += " "
				}
				got += string(s)
			}
		}
		if got != want[a] {
			t.Errorf("%s allowed in %q, want %q", a, got, want[a])
		}
	}
	for _, s := range all {
		if s.Final() {
			for _, a := range Actions {
				if Allowed(a, s) {
					t.Errorf("%s allowed on final status %s", a, s)
				}
			}
		}
	}
}

func TestApply_RefusedWithCode(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	f.r.Status = rollout.Completed
	cases := []struct {
		req  Request
		code string
	}{
		{req: Request{Action: "restart"}, code: CodeUnknownAction},
		{req: Request{Action: ActionPause}, code: CodeNotAllowed},
		{req: Request{Action: ActionResume}, code: CodeNotAllowed},
	}
	for _, c := range cases {
		err := f.act(c.req)
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != c.code || re.Message == "" {
			t.Errorf("%s on completed: %v, want code %s", c.req.Action, err, c.code)
		}
	}
	f.r.Status = rollout.Running
	var re *RefusedError
	if err := f.act(Request{Action: ActionApprove, Wave: 7}); !errors.As(err, &re) || re.Code != CodeWaveNotFound {
		t.Errorf("approve of a missing wave: %v, want %s", err, CodeWaveNotFound)
	}
}

func TestApply_PauseStopsStarts_ResumeContinues(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }), []string{"a", "b"})
	f.tick()
	if err := f.act(Request{Action: ActionPause, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.Paused)
	// The running target keeps its health wait and is evaluated to the end.
	f.apply("a")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
	f.wantTarget("b", rollout.TargetPending)
	f.wantRollout(rollout.Paused)
	if err := f.act(Request{Action: ActionResume}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantTarget("b", rollout.TargetInProgress)
}

func TestApply_ResumeAcknowledgesFailures_RetryFailedCountsAgain(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a", "b", "c"})
	f.r.Policy.MaxConcurrent = 1
	fail := func(id string) {
		f.update(id, func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed}
		})
	}
	f.tick()
	fail("a")
	f.tick()
	f.wantRollout(rollout.Paused) // maxFailed 1
	if err := f.act(Request{Action: ActionResume}); err != nil {
		t.Fatal(err)
	}
	if got := f.r.AckedFailures[0]; len(got) != 1 || got[0] != "a#1" {
		t.Fatalf("ackedFailures[0] = %v, want [a#1]", got)
	}
	f.wantWave(0, rollout.WaveRunning)
	f.tick()
	f.wantRollout(rollout.Running) // the acknowledged failure no longer counts
	f.wantTarget("b", rollout.TargetInProgress)
	// retry-failed: attempt 2 of "a"; a new failure counts toward the threshold again.
	if err := f.act(Request{Action: ActionRetryFailed}); err != nil {
		t.Fatal(err)
	}
	if got := f.target("a"); got.Status != rollout.TargetPending || got.Attempt != 2 || got.StartedAt != nil {
		t.Fatalf("retried target %+v, want pending attempt 2", got)
	}
	f.apply("b")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantTarget("a", rollout.TargetInProgress)
	fail("a")
	f.tick()
	f.wantRollout(rollout.Paused)
	f.wantTarget("a", rollout.TargetFailed)
}

// An abort cancels a target in its health wait too, but sends it no
// executor Cancel: its collector already runs the new version, and there
// is no update left to withdraw (docs/executors.md). Only the target in
// progress gets one.
func TestApply_Abort_NoExecutorCancelInTheHealthWait(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.MaxConcurrent = intp(2) }), []string{"a", "b"})
	f.tick()
	f.apply("a")
	f.tick()
	f.wantTarget("a", rollout.TargetVerifying)
	f.wantTarget("b", rollout.TargetInProgress)
	if err := f.act(Request{Action: ActionAbort, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	f.wantTarget("a", rollout.TargetCancelled)
	f.wantTarget("b", rollout.TargetCancelled)
	if len(f.last.Orders) != 1 || f.last.Orders[0].Kind != OrderCancel || f.last.Orders[0].AgentID != "b" {
		t.Fatalf("orders %+v, want one executor cancel, for b in progress", f.last.Orders)
	}
}

func TestApply_Abort_CancelsOpenTargets(t *testing.T) {
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }), []string{"a", "b"}, []string{"c"})
	f.tick()
	if err := f.act(Request{Action: ActionAbort, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	f.wantRollout(rollout.Aborted)
	for _, id := range []string{"a", "b", "c"} {
		f.wantTarget(id, rollout.TargetCancelled)
	}
	if len(f.last.Orders) != 1 || f.last.Orders[0].Kind != OrderCancel || f.last.Orders[0].AgentID != "a" {
		t.Fatalf("orders %+v, want one executor cancel for the started version target", f.last.Orders)
	}
	// The wave that was running ends with the rollout; the one that never
	// began stays pending.
	f.wantWave(0, rollout.WaveFailed)
	if f.r.Waves[0].FinishedAt == nil {
		t.Fatal("the running wave of an aborted rollout has no finishedAt")
	}
	f.wantWave(1, rollout.WavePending)
	f.tick()
	if len(f.last.Changed) != 0 {
		t.Fatal("an aborted rollout must not be evaluated")
	}
}

func TestApply_RollbackWithoutStartedTargets_RolledBackAtOnce(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	f.update("a", func(a *agent.Agent) { a.Online = false })
	f.tick()
	if err := f.act(Request{Action: ActionRollback}); err != nil {
		t.Fatal(err)
	}
	f.wantTarget("a", rollout.TargetCancelled)
	f.wantRollout(rollout.RolledBack)
	// The wave that was running ends with the rollout.
	f.wantWave(0, rollout.WaveFailed)
	if f.r.Waves[0].FinishedAt == nil {
		t.Fatal("the running wave of a rolled-back rollout has no finishedAt")
	}
}

func TestMarkStartFailed_AllStartedFailInExecutor_RolloutFailed(t *testing.T) {
	// maxFailed 5 is not reached by 2 failures: a broken executor fails the
	// rollout all the same, instead of completing the wave.
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) { s.FailureThreshold.MaxFailed = 5 }), []string{"a", "b"}, []string{"c"})
	f.tick()
	for i := range f.ts {
		f.ts[i] = MarkStartFailed(f.ts[i], f.now, "webhook returned 500")
	}
	f.tick()
	f.wantRollout(rollout.Failed)
	if f.events[len(f.events)-1] != "rollout.failed" {
		t.Fatalf("events %v, want rollout.failed", f.events)
	}
}

func TestRetryFailed_OldFailureReportDoesNotFailTheNewAttempt(t *testing.T) {
	cases := []struct {
		kind policy.Kind
		fail func(f *fixture)
	}{
		{kind: policy.KindVersion, fail: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.Package = agent.PackageStatus{Version: "0.161.0", Status: agent.PackageInstallFailed, Since: f.now}
			})
		}},
		{kind: policy.KindConfig, fail: func(f *fixture) {
			f.update("a", func(a *agent.Agent) {
				a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigFailed, Since: f.now}
			})
		}},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			f := newFixture(t, c.kind, snap(c.kind, nil), []string{"a"})
			f.tick()
			f.advance(time.Second)
			c.fail(f)
			f.tick()
			f.wantTarget("a", rollout.TargetFailed)
			f.advance(time.Minute)
			if err := f.act(Request{Action: ActionRetryFailed}); err != nil {
				t.Fatal(err)
			}
			f.tick()
			f.wantTarget("a", rollout.TargetInProgress) // the report of attempt 1 does not fail attempt 2
			f.advance(time.Second)
			c.fail(f) // attempt 2 fails for itself
			f.tick()
			f.wantTarget("a", rollout.TargetFailed)
		})
	}
}

func TestApply_PausedBeforeItBegan_StartsOnResume(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a"})
	if err := f.act(Request{Action: ActionPause}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.wantTarget("a", rollout.TargetPending)
	if err := f.act(Request{Action: ActionResume}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	if f.r.StartedAt == nil || !f.r.StartedAt.Equal(f.now) || f.events[len(f.events)-1] != "rollout.started" {
		t.Fatalf("startedAt %v events %v: a rollout paused while pending begins on resume", f.r.StartedAt, f.events)
	}
	f.wantTarget("a", rollout.TargetInProgress)
}

// The "cannot continue" rule applies only when no target of the wave can
// still start and every started one failed in the executor; otherwise a
// failed Start is a failure like any other and counts toward the threshold.
func TestTick_ExecutorFailures_CannotContinueOrThreshold(t *testing.T) {
	cases := []struct {
		name          string
		maxConcurrent int
		maxFailed     int
		onFailure     policy.OnFailure
		failStarts    int // Starts that fail, one pass after another
		want          rollout.Status
		wantStarted   int // Start orders in all
	}{
		{name: "one of five fails, maxConcurrent 1: the next starts", maxConcurrent: 1, maxFailed: 3, failStarts: 1, want: rollout.Running, wantStarted: 2},
		{name: "threshold reached by failed Starts pauses", maxConcurrent: 1, maxFailed: 2, failStarts: 2, want: rollout.Paused, wantStarted: 2},
		{name: "threshold with onFailure rollback rolls back", maxConcurrent: 1, maxFailed: 1, onFailure: policy.OnFailureRollback, failStarts: 1, want: rollout.RolledBack, wantStarted: 1},
		{name: "every target of the wave failed in the executor", maxConcurrent: 0, maxFailed: 10, failStarts: 5, want: rollout.Failed, wantStarted: 5},
		{name: "one at a time, all five fail in the executor", maxConcurrent: 1, maxFailed: 10, failStarts: 5, want: rollout.Failed, wantStarted: 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, func(s *policy.Spec) {
				s.MaxConcurrent, s.FailureThreshold.MaxFailed = intp(c.maxConcurrent), c.maxFailed
				if c.onFailure != "" {
					s.OnFailure = c.onFailure
				}
			}), []string{"a", "b", "c", "d", "e"})
			failed := 0
			f.tick()
			for failed < c.failStarts && f.r.Status == rollout.Running {
				for i := range f.ts {
					if f.ts[i].Status == rollout.TargetInProgress && failed < c.failStarts {
						f.ts[i] = MarkStartFailed(f.ts[i], f.now, "webhook returned 503")
						failed++
					}
				}
				f.tick()
			}
			f.wantRollout(c.want)
			if got := f.startedOrders(); got != c.wantStarted {
				t.Fatalf("%d Start orders, want %d", got, c.wantStarted)
			}
		})
	}
}

// A wave shows waiting_approval until the engine starts it: a second
// approval in between is refused, so only the first is a success.
func TestApply_ApproveTwice_SecondRefused(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.Waves = []policy.Wave{{Name: "canary", Percent: 50}, {Name: "rest", Percent: 100, RequireApproval: true}}
	})
	f := newFixture(t, policy.KindConfig, s, []string{"a"}, []string{"b"})
	f.tick()
	f.apply("a")
	f.tick()
	f.advance(time.Minute)
	f.tick()
	f.wantWave(1, rollout.WaveWaitingApproval)
	in := Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now}
	first, err := Apply(in, Request{Action: ActionApprove, Wave: 1, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	in.Rollout = first.Rollout
	_, err = Apply(in, Request{Action: ActionApprove, Wave: 1, Actor: "bob"})
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Code != CodeWaveApproved {
		t.Fatalf("second approval: %v, want %s", err, CodeWaveApproved)
	}
}

// TestApply_RetryFailed_NothingFailedIsRefused: retry-failed needs a failed
// target, wave or stage; without one it is refused and changes nothing, so
// that it never resumes a paused rollout under another name.
func TestApply_RetryFailed_NothingFailedIsRefused(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a", "b"})
	f.tick()
	if err := f.act(Request{Action: ActionPause, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	before := f.r
	err := f.act(Request{Action: ActionRetryFailed, Actor: "alice"})
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != CodeNothingToRetry {
		t.Fatalf("retry-failed with nothing failed: %v, want %s", err, CodeNothingToRetry)
	}
	if want := "rollout " + f.r.ID + " has no failed targets, waves or stages to retry; it is paused; resume continues it"; re.Message != want {
		t.Errorf("message %q, want %q", re.Message, want)
	}
	f.wantRollout(rollout.Paused)
	if f.r.StatusReason != before.StatusReason {
		t.Errorf("reason %q, want %q kept", f.r.StatusReason, before.StatusReason)
	}
}

// TestApply_RetryFailed_FailedWaveOrStageWithoutFailedTargets: a red gate
// fails a stage and a rejection fails a wave, without any failed target;
// both are something to retry.
func TestApply_RetryFailed_FailedWaveOrStageWithoutFailedTargets(t *testing.T) {
	t.Run("red gate", func(t *testing.T) {
		f := gatedFixture(t, nil)
		f.tick()
		f.settle()
		f.toNext()
		f.read(true)
		f.wantRollout(rollout.Paused)
		if err := f.act(Request{Action: ActionRetryFailed, Actor: "user:bob"}); err != nil {
			t.Fatalf("retry-failed after a red gate: %v", err)
		}
		f.wantRollout(rollout.Running)
	})
	t.Run("rejected approval", func(t *testing.T) {
		f := approvalFixture(t, 1)
		f.toApproval()
		if err := f.act(Request{Action: ActionReject, Wave: 1, Actor: "user:bob"}); err != nil {
			t.Fatal(err)
		}
		f.wantRollout(rollout.Paused)
		if err := f.act(Request{Action: ActionRetryFailed, Actor: "user:bob"}); err != nil {
			t.Fatalf("retry-failed after a rejection: %v", err)
		}
		f.wantWave(1, rollout.WavePending) // it asks for the approval again
	})
}
