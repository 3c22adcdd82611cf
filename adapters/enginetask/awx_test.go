package enginetask_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/awx"
	"github.com/myriarch/myriarch/adapters/executor/awx/awxtest"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/route"
)

type tokens map[string]string

func (s tokens) Secret(_ context.Context, name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s not found", name)
}

func hostAttrs(i int) map[string]string {
	return map[string]string{"host.name": fmt.Sprintf("edge-%d.example.com", i)}
}

// withAWX makes the rig's version rollouts run through the AWX executor
// against a local server implementing AWX's documented API (not AWX), and
// lets that server run its jobs: a pending job updates the collector of the
// host its limit names and succeeds, except on the hosts in failOn, where
// the job fails and the collector stays as it is.
func withAWX(r *rig, failOn ...string) *awxtest.Server {
	srv := awxtest.New("awx-token", r.clk.Now)
	srv.AddTemplate(awxtest.Template{ID: 7, Name: "upgrade otelcol", AskLimit: true, AskVariables: true})
	hs := httptest.NewServer(srv)
	r.t.Cleanup(hs.Close)
	r.h.Executors[executorobject.TypeAWX] = awx.Executor{HTTP: hs.Client(), Secrets: tokens{"awx/token": "awx-token"},
		Now: r.clk.Now, Log: slog.New(slog.DiscardHandler)}
	r.versionExecutor = executorobject.TypeAWX
	r.executorObject = &executorobject.Object{Name: "awx-prod", Type: executorobject.TypeAWX,
		AWX: &executorobject.AWX{URL: hs.URL, JobTemplateID: 7, CredentialRef: "awx/token", ExtraVars: map[string]any{"otelcol_version": "{version}"}}}
	r.react = func() { runJobs(r, srv, failOn) }
	return srv
}

func runJobs(r *rig, srv *awxtest.Server, failOn []string) {
	byHost := map[string]agent.Agent{}
	recs, err := r.st.AgentsByID(r.ctx, r.allIDs())
	if err != nil {
		r.t.Fatal(err)
	}
	for _, a := range recs {
		byHost[a.Attributes["host.name"]] = a
	}
	now := r.clk.Now()
	for _, j := range srv.Jobs() {
		if j.Status != awxtest.StatusPending {
			continue
		}
		if contains(failOn, j.Limit) {
			srv.SetStatus(j.ID, awxtest.StatusFailed, "Task 'install otelcol' failed: package otelcol-contrib 0.161.0 not found")
			continue
		}
		a := byHost[j.Limit]
		a.ServiceVersion, a.VersionSince = j.ExtraVars["otelcol_version"].(string), now
		a.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: now}
		if err := r.st.RecordAgent(r.ctx, a); err != nil {
			r.t.Fatal(err)
		}
		srv.SetStatus(j.ID, awxtest.StatusSuccessful, "")
	}
}

func TestStateMachine_AWXJobFails_TargetFailsAndThresholdPauses(t *testing.T) {
	r := newRig(t)
	srv := withAWX(r, "edge-2.example.com")
	ids := r.agents(4, hostAttrs)
	spec := policy.Spec{HealthWait: time.Minute, FailureThreshold: policy.Threshold{MaxFailed: 1}}
	r.start("r-awx", policy.KindVersion, spec, ids, nil)
	r.run(nil)

	ro := r.wantStatus("r-awx", rollout.Paused)
	if !ro.PausedByThreshold || !strings.Contains(ro.StatusReason, "failure threshold") {
		t.Fatalf("reason %q, want the failure threshold", ro.StatusReason)
	}
	_, ts := r.rollout("r-awx")
	launches := srv.Launches()
	if len(launches) != 4 {
		t.Fatalf("%d launches, want one per target", len(launches))
	}
	jobOf := map[string]int{}
	for _, l := range launches {
		jobOf[l.Body["limit"].(string)] = l.Job
	}
	for i, tg := range ts {
		host := hostAttrs(i)["host.name"]
		if tg.ExternalRef != awx.Ref(jobOf[host]) {
			t.Errorf("target %s: ref %q, want the job of %s (%d)", tg.AgentID, tg.ExternalRef, host, jobOf[host])
		}
		if tg.AgentID == "a02" {
			want := fmt.Sprintf("AWX job %d failed (status failed): Task 'install otelcol' failed", jobOf[host])
			if tg.Status != rollout.TargetFailed || tg.ReasonCode != engine.FailExecutorJob || !strings.HasPrefix(tg.Reason, want) {
				t.Errorf("target a02 %s %s %q, want failed with %s and %q", tg.Status, tg.ReasonCode, tg.Reason, engine.FailExecutorJob, want)
			}
			if d := tg.FinishedAt.Sub(*tg.StartedAt); d > route.ApplyCap {
				t.Errorf("target a02 failed %s after it started, want at the next evaluation (within %s), not at applyTimeout", d, route.ApplyCap)
			}
			continue
		}
		if tg.Status != rollout.TargetSucceeded {
			t.Errorf("target %s %s (%s), want succeeded: a pause lets the health waits end", tg.AgentID, tg.Status, tg.Reason)
		}
	}
	if ro.Waves[0].Status != rollout.WaveFailed {
		t.Fatalf("wave %s, want failed", ro.Waves[0].Status)
	}
}

// A failed job's target is no executor error: it is one failure among
// others, so retry-failed launches a new job (the next attempt's delivery)
// and the rollout completes when that job succeeds.
func TestStateMachine_AWXJobFails_RetryFailedLaunchesAgain(t *testing.T) {
	r := newRig(t)
	failOn := []string{"edge-1.example.com"}
	srv := withAWX(r)
	r.react = func() { runJobs(r, srv, failOn) }
	ids := r.agents(2, hostAttrs)
	r.start("r-awx-retry", policy.KindVersion, policy.Spec{HealthWait: time.Minute}, ids, nil)
	r.run(nil)
	r.wantStatus("r-awx-retry", rollout.Paused)
	failOn = nil // the package repository is fixed
	r.operate("r-awx-retry", engine.Request{Action: engine.ActionRetryFailed, Actor: "user:dana"})
	r.run(nil)
	r.wantStatus("r-awx-retry", rollout.Completed)
	var deliveries []string
	for _, l := range srv.Launches() {
		if l.Body["limit"] == "edge-1.example.com" {
			deliveries = append(deliveries, l.Body["extra_vars"].(map[string]any)[awx.VarDeliveryID].(string))
		}
	}
	want := []string{executor.DeliveryID("r-awx-retry", "a01", 1, executor.OpStart), executor.DeliveryID("r-awx-retry", "a01", 2, executor.OpStart)}
	if len(deliveries) != 2 || deliveries[0] != want[0] || deliveries[1] != want[1] {
		t.Fatalf("deliveries of edge-1 %v, want attempts 1 and 2 %v", deliveries, want)
	}
}

// createAWXRollout stores a version rollout of two agents through the rig's
// AWX without starting an execution: the test runs its evaluations itself.
func createAWXRollout(r *rig, id string) {
	ids := r.agents(2, hostAttrs)
	snap := policy.Policy{Name: "test", Spec: policy.Spec{}}.Snapshot(policy.KindVersion)
	ro, ts, err := engine.Create(engine.NewRollout{ID: id, Fleet: "edge", Kind: policy.KindVersion, Policy: snap, ToRef: "0.161.0",
		Origin: rollout.OriginGitOps, Candidates: []engine.Candidate{{AgentID: ids[0], FromRef: "0.160.0"}, {AgentID: ids[1], FromRef: "0.160.0"}}, Now: r.clk.Now()})
	if err != nil {
		r.t.Fatal(err)
	}
	ro.Executor, ro.ExecutorObject = r.versionExecutor, r.executorObject
	if err := r.st.CreateRollout(r.ctx, ro, ts); err != nil {
		r.t.Fatal(err)
	}
}

// Only the state machine's evaluate task asks the executor: an evaluation after an
// agent event (Evaluate) does not poll AWX.
func TestEvaluate_OnlyTheEvaluateTaskAsksAWX(t *testing.T) {
	r := newRig(t)
	srv := withAWX(r)
	r.react = nil // the jobs stay pending
	createAWXRollout(r, "r-poll")
	polls := func() int {
		n := 0
		for _, req := range srv.Requests() {
			if strings.HasPrefix(req, "GET /api/v2/jobs/") && req != "GET /api/v2/jobs/" {
				n++
			}
		}
		return n
	}
	for range 2 {
		if _, err := r.h.Evaluate(r.ctx, "r-poll"); err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.Launches()) != 2 || polls() != 0 {
		t.Fatalf("launches %d polls %d, want 2 launches and no poll from Evaluate", len(srv.Launches()), polls())
	}
	if _, err := r.h.EvaluateWatching(r.ctx, "r-poll"); err != nil {
		t.Fatal(err)
	}
	if polls() != 2 {
		t.Fatalf("polls %d, want one per target in progress", polls())
	}
}

// An abort cancels the jobs even when Validate fails meanwhile (the
// template no longer prompts for the limit): Cancel is not held up by it.
func TestAct_AbortCancelsTheJobsOfAMisconfiguredTemplate(t *testing.T) {
	r := newRig(t)
	srv := withAWX(r)
	r.react = nil
	createAWXRollout(r, "r-abort")
	if _, err := r.h.Evaluate(r.ctx, "r-abort"); err != nil {
		t.Fatal(err)
	}
	srv.AddTemplate(awxtest.Template{ID: 7, Name: "upgrade otelcol", AskVariables: true})
	r.operate("r-abort", engine.Request{Action: engine.ActionAbort, Actor: "user:dana"})
	r.wantStatus("r-abort", rollout.Aborted)
	jobs := srv.Jobs()
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v, want the two launched", jobs)
	}
	for _, j := range jobs {
		if j.Status != awxtest.StatusCanceled {
			t.Errorf("job %d %s, want canceled", j.ID, j.Status)
		}
	}
}
