package enginetask_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
	"github.com/myriarch/myriarch/local/sfnlocal"
)

func canaryAttrs(i int) map[string]string {
	if i < 2 {
		return map[string]string{"labels.wave": "canary"}
	}
	return map[string]string{"labels.wave": "rest"}
}

// canaryThenAll is the example policy of docs/policy.md without its windows.
func canaryThenAll() policy.Spec {
	five := 5
	return policy.Spec{
		Waves: []policy.Wave{
			{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
			{Name: "rest", Percent: 100, RequireApproval: true},
		},
		MaxConcurrent: &five, HealthWait: 5 * time.Minute, ApplyTimeout: 30 * time.Minute, OfflineGracePeriod: 30 * time.Minute,
		FailureThreshold: policy.Threshold{MaxFailed: 1},
	}
}

func TestStateMachine_CanaryThenAll_ApprovedAndCompleted(t *testing.T) {
	r := newRig(t)
	ids := r.agents(8, canaryAttrs)
	r.start("r-canary", policy.KindConfig, canaryThenAll(), ids, canaryAttrs)
	r.run(nil)
	ro := r.wantStatus("r-canary", rollout.WaitingApproval)
	if ro.Waves[0].Status != rollout.WaveCompleted || ro.Waves[1].Status != rollout.WaveWaitingApproval || ro.TaskToken == "" {
		t.Fatalf("waves %+v token %q: the canary completed and the rest waits, parked on a token", ro.Waves, ro.TaskToken)
	}
	states, _ := r.history("r-canary")
	if states[len(states)-1] != "Waiting for approval" || !contains(states, "Health wait") {
		t.Fatalf("states %v: the console must show the health wait and the approval", states)
	}
	r.operate("r-canary", engine.Request{Action: engine.ActionApprove, Wave: 1, Actor: "user:alice"})
	r.run(nil)
	r.wantStatus("r-canary", rollout.Completed)
	r.wantExecution("r-canary", types.ExecutionStatusSucceeded)
	_, ts := r.rollout("r-canary")
	for _, tg := range ts {
		if tg.Status != rollout.TargetSucceeded {
			t.Fatalf("target %+v, want succeeded", tg)
		}
	}
}

func TestStateMachine_HealthWaitEndsExactly(t *testing.T) {
	r := newRig(t)
	ids := r.agents(1, nil)
	spec := policy.Spec{HealthWait: 90 * time.Second}
	r.start("r-hw", policy.KindConfig, spec, ids, nil)
	r.run(nil)
	r.wantStatus("r-hw", rollout.Completed)
	_, ts := r.rollout("r-hw")
	tg := ts[0]
	if tg.VerifiedAt == nil || tg.FinishedAt == nil || !tg.FinishedAt.Equal(tg.VerifiedAt.Add(90*time.Second)) {
		t.Fatalf("target verified %v finished %v: the health wait must end exactly at verifiedAt + healthWait", tg.VerifiedAt, tg.FinishedAt)
	}
}

func TestStateMachine_FailingCanary_PausesThenResume(t *testing.T) {
	r := newRig(t)
	ids := r.agents(6, canaryAttrs)
	r.behaviour["a00"] = "fail"
	r.start("r-fail", policy.KindConfig, canaryThenAll(), ids, canaryAttrs)
	r.run(nil)
	ro := r.wantStatus("r-fail", rollout.Paused)
	if !strings.Contains(ro.StatusReason, "failure threshold") || ro.TaskToken == "" {
		t.Fatalf("reason %q token %q: paused by the threshold, parked on a token", ro.StatusReason, ro.TaskToken)
	}
	r.operate("r-fail", engine.Request{Action: engine.ActionResume, Actor: "user:bob"})
	ro = r.wantStatus("r-fail", rollout.WaitingApproval) // resume acknowledged a00#1; the canary wave completed
	if got := ro.AckedFailures[0]; len(got) != 1 || got[0] != "a00#1" {
		t.Fatalf("ackedFailures %v, want [a00#1]", ro.AckedFailures)
	}
	r.operate("r-fail", engine.Request{Action: engine.ActionApprove, Wave: 1})
	r.run(nil)
	r.wantStatus("r-fail", rollout.Completed)
}

func TestStateMachine_OnFailureRollback_RolledBack(t *testing.T) {
	r := newRig(t)
	ids := r.agents(4, nil)
	r.behaviour["a03"] = "fail"
	spec := policy.Spec{OnFailure: policy.OnFailureRollback, HealthWait: time.Minute}
	r.start("r-rb", policy.KindConfig, spec, ids, nil)
	r.run(nil)
	r.wantStatus("r-rb", rollout.RolledBack)
	r.wantExecution("r-rb", types.ExecutionStatusFailed) // the console shows a rolled-back rollout in red
	_, ts := r.rollout("r-rb")
	for _, tg := range ts {
		if tg.Status != rollout.TargetRolledBack {
			t.Fatalf("target %s %s, want rolled_back", tg.AgentID, tg.Status)
		}
	}
	states, _ := r.history("r-rb")
	if states[len(states)-1] != "Rolled back" {
		t.Fatalf("last state %q, want Rolled back", states[len(states)-1])
	}
}

func TestStateMachine_Abort(t *testing.T) {
	r := newRig(t)
	ids := r.agents(6, canaryAttrs)
	r.start("r-abort", policy.KindConfig, canaryThenAll(), ids, canaryAttrs)
	r.run(nil)
	r.wantStatus("r-abort", rollout.WaitingApproval)
	r.operate("r-abort", engine.Request{Action: engine.ActionAbort, Actor: "user:carol"})
	r.run(nil)
	r.wantStatus("r-abort", rollout.Aborted)
	r.wantExecution("r-abort", types.ExecutionStatusSucceeded)
	_, ts := r.rollout("r-abort")
	for _, tg := range ts {
		if tg.Wave == 1 && tg.Status != rollout.TargetCancelled {
			t.Fatalf("target %+v of the unapproved wave, want cancelled", tg)
		}
	}
}

func TestStateMachine_MaintenanceWindowDelaysStart(t *testing.T) {
	r := newRig(t)
	ids := r.agents(2, nil)
	// t0 is Monday 12:00 UTC; the window opens at 22:00 UTC.
	spec := policy.Spec{MaintenanceWindows: []windows.Window{{Start: 22 * 60, End: 5 * 60, Timezone: "UTC"}}}
	r.start("r-win", policy.KindConfig, spec, ids, nil)
	r.run(func() bool {
		_, ts := r.rollout("r-win")
		return ts[0].StartedAt != nil
	})
	_, ts := r.rollout("r-win")
	opens := time.Date(2026, 3, 2, 22, 0, 0, 0, time.UTC)
	if !ts[0].StartedAt.Equal(opens) {
		t.Fatalf("started at %s, want when the window opens, %s", ts[0].StartedAt, opens)
	}
	r.run(nil)
	r.wantStatus("r-win", rollout.Completed)
	states, events := r.history("r-win")
	if !contains(states, "Waiting for a maintenance window") || events > 200 {
		t.Fatalf("%d events, states %v: a ten-hour wait for a window must sleep until it opens, not tick", events, states)
	}
}

func TestStateMachine_TransientTaskFailure_RetriedWithoutDoubleEffects(t *testing.T) {
	r := newRig(t)
	ids := r.agents(3, nil)
	r.failEval.Store(2)
	r.start("r-retry", policy.KindConfig, policy.Spec{}, ids, nil)
	r.run(nil)
	r.wantStatus("r-retry", rollout.Completed)
	for _, id := range ids {
		if n := r.applies[id]; n != 1 {
			t.Fatalf("agent %s applied the configuration %d times, want once", id, n)
		}
	}
	_, ts := r.rollout("r-retry")
	for _, tg := range ts {
		if tg.Attempt != 1 || tg.Status != rollout.TargetSucceeded {
			t.Fatalf("target %+v, want one succeeded attempt", tg)
		}
	}
}

func TestStateMachine_VersionRolloutThroughTheUpdater(t *testing.T) {
	r := newRig(t)
	ids := r.agents(5, nil)
	r.start("r-ver", policy.KindVersion, policy.Spec{Waves: []policy.Wave{{Name: "early", Percent: 20}, {Name: "rest", Percent: 100}}}, ids, nil)
	r.run(nil)
	r.wantStatus("r-ver", rollout.Completed)
	_, ts := r.rollout("r-ver")
	for _, tg := range ts {
		if tg.ExternalRef != "updater" || tg.Progress == nil || tg.Progress.Phase != "succeeded" {
			t.Fatalf("target %+v progress %+v, want started by the updater and progress succeeded", tg, tg.Progress)
		}
	}
}

func TestStateMachine_LongRolloutContinuesAsNewExecution(t *testing.T) {
	r := newRig(t)
	r.h.ContinueAfter = 3 // in production MaxIterations evaluations
	ids := r.agents(2, nil)
	spec := policy.Spec{HealthWait: 10 * time.Minute}
	r.start("r-long", policy.KindConfig, spec, ids, nil)
	r.run(nil)
	r.wantStatus("r-long", rollout.Completed)
	states, _ := r.history("r-long")
	if states[len(states)-1] != "Continued as a new execution" {
		t.Fatalf("the first execution ended in %q, want a continuation", states[len(states)-1])
	}
	r.wantExecution("r-long", types.ExecutionStatusSucceeded)
	ro, _ := r.rollout("r-long")
	if ro.Executions < 2 || !strings.HasSuffix(ro.ExecutionArn, ":r-long-"+strconv.Itoa(ro.Executions)) {
		t.Fatalf("executions %d arn %s, want the rollout carried on by r-long-<n>", ro.Executions, ro.ExecutionArn)
	}
	r.wantExecution("r-long-"+strconv.Itoa(ro.Executions), types.ExecutionStatusSucceeded)
}

// flakyStart is the updater whose Start fails once for one agent, as a
// transient executor error would.
type flakyStart struct {
	executor.UpdaterExecutor
	failFor string
	failed  atomic.Bool
}

func (f *flakyStart) Start(ctx context.Context, c executor.Call) (string, error) {
	if c.Target.AgentID == f.failFor && f.failed.CompareAndSwap(false, true) {
		return "", errors.New("webhook answered 503")
	}
	return f.UpdaterExecutor.Start(ctx, c)
}

// A failed Start is one failure among others: the evaluation that saw it is
// evaluated again at once, so the next target starts in the same evaluation
// instead of after applyTimeout, and the rollout neither fails (other
// targets remain to start) nor stalls.
func TestStateMachine_FailedStart_NextTargetStartsAtOnce(t *testing.T) {
	r := newRig(t)
	r.h.Executors[executor.Updater] = &flakyStart{UpdaterExecutor: executor.UpdaterExecutor{Offers: r.st}, failFor: "a00"}
	ids := r.agents(4, nil)
	one := 1
	spec := policy.Spec{MaxConcurrent: &one, HealthWait: time.Minute, ApplyTimeout: 30 * time.Minute, FailureThreshold: policy.Threshold{MaxFailed: 3}}
	r.start("r-flaky", policy.KindVersion, spec, ids, nil)
	r.run(nil)
	ro := r.wantStatus("r-flaky", rollout.Completed)
	if took := ro.FinishedAt.Sub(*ro.StartedAt); took >= 30*time.Minute {
		t.Fatalf("the rollout took %s: it waited applyTimeout after the failed Start", took)
	}
	_, ts := r.rollout("r-flaky")
	for _, tg := range ts {
		want := rollout.TargetSucceeded
		if tg.AgentID == "a00" {
			want = rollout.TargetFailed
		}
		if tg.Status != want {
			t.Fatalf("target %s is %s (%s), want %s", tg.AgentID, tg.Status, tg.Reason, want)
		}
	}
}

// A rollout whose wave is split by zone runs its stages one after the
// other with a bake between them, shown as the state "Baking"; engine tasks
// that fail during the bake and are retried do not start it over: the next
// stage begins when the stored bake ends (plus the seconds of the retries'
// backoff), not a whole bake later.
func TestStateMachine_StagesWithBake_SurviveRetriedTasks(t *testing.T) {
	r := newRig(t)
	zoneAttrs := func(i int) map[string]string {
		return map[string]string{"cloud.region": "r1", "cloud.availability_zone": []string{"r1a", "r1b"}[i%2]}
	}
	ids := r.agents(4, zoneAttrs)
	spec := policy.Spec{Waves: []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone, Bake: 10 * time.Minute}},
		HealthWait: time.Minute}
	r.start("r-zones", policy.KindConfig, spec, ids, zoneAttrs)
	injected := false
	r.run(func() bool {
		ro, _ := r.rollout("r-zones")
		if !injected && len(ro.Stages) > 0 && ro.Stages[0].Status == rollout.StageBaking {
			r.failEval.Store(2) // the next two evaluations fail and are retried
			injected = true
		}
		return false
	})
	ro := r.wantStatus("r-zones", rollout.Completed)
	if !injected {
		t.Fatal("the first stage never baked")
	}
	first, second := ro.Stages[0], ro.Stages[1]
	if first.BakeUntil == nil || second.StartedAt == nil || !first.BakeUntil.Equal(first.FinishedAt.Add(10*time.Minute)) ||
		second.StartedAt.Before(*first.BakeUntil) || second.StartedAt.After(first.BakeUntil.Add(time.Minute)) {
		t.Fatalf("stages %+v: the second must start when the first's bake (finish + 10m) ends", ro.Stages)
	}
	states, _ := r.history("r-zones")
	if !contains(states, "Baking") {
		t.Fatalf("states %v: the console must show the bake", states)
	}
	// The console shows which stage bakes and which one applies: the inputs
	// of "Baking" name the first stage, then the second; so do those of the
	// health waits.
	if baked := r.stagesShown("r-zones", "Baking"); len(baked) == 0 || baked[0] != "all/r1a" || !contains(baked, "all/r1b") || contains(baked, "") {
		t.Fatalf("Baking entered with stages %q, want all/r1a, then all/r1b", baked)
	}
	if applied := r.stagesShown("r-zones", "Health wait"); !contains(applied, "all/r1a") || !contains(applied, "all/r1b") {
		t.Fatalf("Health wait entered with stages %q, want all/r1a then all/r1b", applied)
	}
}

// A staged rollout that continues as a new execution names the stage in
// the new execution's input, and its first state's output names it too,
// so that the console shows where the rollout is from the first event.
func TestStateMachine_StagedRolloutContinues_TheNewInputNamesTheStage(t *testing.T) {
	r := newRig(t)
	r.h.ContinueAfter = 3
	zoneAttrs := func(i int) map[string]string {
		return map[string]string{"cloud.region": "r1", "cloud.availability_zone": []string{"r1a", "r1b"}[i%2]}
	}
	ids := r.agents(4, zoneAttrs)
	spec := policy.Spec{Waves: []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone, Bake: 10 * time.Minute}},
		HealthWait: 10 * time.Minute}
	r.start("r-zc", policy.KindConfig, spec, ids, zoneAttrs)
	r.run(nil)
	ro := r.wantStatus("r-zc", rollout.Completed)
	if ro.Executions < 2 {
		t.Fatalf("%d executions, want a continuation", ro.Executions)
	}
	var in struct {
		RolloutID string `json:"rolloutId"`
		Stage     string `json:"stage"`
	}
	if err := json.Unmarshal([]byte(*r.execution("r-zc-2").Input), &in); err != nil {
		t.Fatal(err)
	}
	if in.RolloutID != "r-zc" || !strings.HasPrefix(in.Stage, "all/r1") {
		t.Fatalf("input of r-zc-2 %+v, want the rollout and its stage", in)
	}
	if shown := r.stagesShown("r-zc-2", "Evaluate rollout"); len(shown) == 0 || shown[0] != in.Stage {
		t.Fatalf("Evaluate rollout of r-zc-2 entered with stages %q, want %s first", shown, in.Stage)
	}
}

// reparkFirst delivers SendTaskSuccess and waits until the woken execution
// has run on and parked again before it returns: the order in which a fast
// execution beats the operator action that woke it.
type reparkFirst struct {
	execution.StepFunctions
	srv *sfnlocal.Server
}

func (s reparkFirst) SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, opts ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	out, err := s.StepFunctions.SendTaskSuccess(ctx, in, opts...)
	if err == nil {
		err = s.srv.WaitIdle(ctx)
	}
	return out, err
}

// An operator action must clear only the token it woke: the execution it
// woke may already have parked again (resume into an approval), and that new
// token is the only way the next action can reach it.
func TestStateMachine_ResumeIntoApproval_KeepsTheNewToken(t *testing.T) {
	r := newRig(t)
	r.h.SFN = reparkFirst{StepFunctions: r.sfn, srv: r.srv}
	ids := r.agents(6, canaryAttrs)
	r.behaviour["a00"] = "fail"
	r.start("r-repark", policy.KindConfig, canaryThenAll(), ids, canaryAttrs)
	r.run(nil)
	paused := r.wantStatus("r-repark", rollout.Paused)
	r.operate("r-repark", engine.Request{Action: engine.ActionResume, Actor: "user:bob"})
	ro := r.wantStatus("r-repark", rollout.WaitingApproval)
	if ro.TaskToken == "" || ro.TaskToken == paused.TaskToken {
		t.Fatalf("token %q (paused on %q): the approval's token must survive the resume", ro.TaskToken, paused.TaskToken)
	}
	r.operate("r-repark", engine.Request{Action: engine.ActionApprove, Wave: 1})
	r.run(nil)
	r.wantStatus("r-repark", rollout.Completed)
}
