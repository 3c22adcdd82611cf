package engine

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// startedWithRefs runs the first pass of a version rollout over ids and
// gives every started target the external reference job-<id>, as the
// adapter does with what the executor's Start returned.
func startedWithRefs(t *testing.T, tweak func(*policy.Spec), ids ...string) *fixture {
	t.Helper()
	f := newFixture(t, policy.KindVersion, snap(policy.KindVersion, tweak), ids)
	f.tick()
	for i := range f.ts {
		if f.ts[i].Status == rollout.TargetInProgress {
			f.ts[i].ExternalRef = "job-" + f.ts[i].AgentID
		}
	}
	return f
}

func TestTick_ExecutorJobFailed_FailsTheTargetAndPausesAtTheThreshold(t *testing.T) {
	f := startedWithRefs(t, func(s *policy.Spec) { s.FailureThreshold = policy.Threshold{MaxFailed: 1} }, "a", "b", "c")
	f.advance(10 * time.Second)
	f.execFailures = map[string]ExecutorFailure{"b": {ExternalRef: "job-b", Reason: "AWX job 7 failed (status failed)"}}
	f.tick()
	f.wantTarget("b", rollout.TargetFailed)
	if got := f.target("b"); got.ReasonCode != FailExecutorJob || got.Reason != "AWX job 7 failed (status failed)" || !got.FinishedAt.Equal(f.now) {
		t.Fatalf("target %+v, want %s with the executor's reason, finished now", got, FailExecutorJob)
	}
	f.wantTarget("a", rollout.TargetInProgress)
	f.wantRollout(rollout.Paused)
	if !f.r.PausedByThreshold {
		t.Fatal("the pause must come from the threshold, so that resume acknowledges the failure")
	}
}

// A failed job is a failure of the update, not of the executor: a wave
// whose only target's job failed meets the threshold and onFailure, where a
// failed Start (executor_error) would make the rollout failed.
func TestTick_ExecutorJobFailed_IsNoExecutorError(t *testing.T) {
	f := startedWithRefs(t, nil, "a")
	f.execFailures = map[string]ExecutorFailure{"a": {ExternalRef: "job-a", Reason: "AWX job 1 failed (status error)"}}
	f.tick()
	f.wantTarget("a", rollout.TargetFailed)
	f.wantRollout(rollout.Paused)
}

func TestTick_ExecutorFailure_OnlyOfTheCurrentUpdate(t *testing.T) {
	cases := []struct {
		name    string
		report  ExecutorFailure
		ref     string // the target's external reference
		reports bool   // the agent reports the new version in the same pass
		want    rollout.TargetStatus
	}{
		{name: "the target's job", report: ExecutorFailure{ExternalRef: "job-a", Reason: "x"}, ref: "job-a", want: rollout.TargetFailed},
		{name: "an earlier attempt's job", report: ExecutorFailure{ExternalRef: "job-old", Reason: "x"}, ref: "job-a", want: rollout.TargetInProgress},
		{name: "a target without a reference", report: ExecutorFailure{Reason: "x"}, ref: "", want: rollout.TargetInProgress},
		{name: "the collector reported the version", report: ExecutorFailure{ExternalRef: "job-a", Reason: "x"}, ref: "job-a", reports: true, want: rollout.TargetVerifying},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := startedWithRefs(t, nil, "a")
			f.ts[0].ExternalRef = c.ref
			if c.reports {
				f.apply("a")
			}
			f.execFailures = map[string]ExecutorFailure{"a": c.report}
			f.tick()
			f.wantTarget("a", c.want)
		})
	}
}
