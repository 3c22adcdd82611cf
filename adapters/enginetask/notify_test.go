package enginetask_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// notifications reads a rollout's events from the outbox in the order of
// its versions, as the feed serves them, and checks what every sequence
// must hold: ids unique and equal to <rollout>:v<version>:<index>, the
// versions rising, the times never going back.
func (r *rig) notifications(id string) []notify.Event {
	r.t.Helper()
	var out []notify.Event
	q := notify.Query{Rollout: id, Limit: 7}
	for {
		p, err := r.st.EventsPage(r.ctx, q)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, p.Items...)
		if !p.More {
			break
		}
		q.After = p.Next
	}
	seen := map[string]bool{}
	for i, e := range out {
		if seen[e.EventID] {
			r.t.Errorf("event id %s twice", e.EventID)
		}
		seen[e.EventID] = true
		if e.EventID != notify.ID(id, e.Rollout.Version, e.Index) || e.Rollout.ID != id {
			r.t.Errorf("event %+v: its id is not <rollout>:v<version>:<index>", e)
		}
		if i > 0 && (e.Rollout.Version < out[i-1].Rollout.Version || e.Time.Before(out[i-1].Time)) {
			r.t.Errorf("event %s (v%d, %s) after %s (v%d, %s)", e.Type, e.Rollout.Version, e.Time, out[i-1].Type, out[i-1].Rollout.Version, out[i-1].Time)
		}
	}
	return out
}

func typesOf(es []notify.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func wantTypes(t *testing.T, es []notify.Event, want ...string) {
	t.Helper()
	if fmt.Sprint(typesOf(es)) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", typesOf(es), want)
	}
}

// A rollout that pauses at its failure threshold, is resumed, waits for
// approval, is approved and completes notifies exactly that, each event
// with the rollout as the change left it.
func TestNotifications_PauseResumeApproveComplete(t *testing.T) {
	r := newRig(t)
	ids := r.agents(6, canaryAttrs)
	r.behaviour["a00"] = "fail"
	r.start("r-notify", policy.KindConfig, canaryThenAll(), ids, canaryAttrs)
	r.run(nil)
	r.wantStatus("r-notify", rollout.Paused)
	r.operate("r-notify", engine.Request{Action: engine.ActionResume, Actor: "Bob"})
	r.operate("r-notify", engine.Request{Action: engine.ActionApprove, Wave: 1, Actor: "Carol"})
	r.run(nil)
	r.wantStatus("r-notify", rollout.Completed)

	es := r.notifications("r-notify")
	wantTypes(t, es, "rollout.started", "rollout.paused", "rollout.resumed", "rollout.waiting_approval", "rollout.approved", "rollout.completed")
	started, paused, resumed, waiting, approved, completed := es[0], es[1], es[2], es[3], es[4], es[5]
	if !started.Time.Equal(t0) || started.Rollout.Counts["total"] != 6 || started.Rollout.Wave == nil || started.Rollout.Wave.Name != "canary" {
		t.Errorf("started %+v, want at t0 with 6 targets, on the canary wave", started)
	}
	if paused.Rollout.Status != rollout.Paused || paused.Reason == "" || paused.Reason != paused.Rollout.StatusReason || paused.Rollout.Counts["failed"] != 1 {
		t.Errorf("paused %+v, want the threshold's reason and the failed target", paused)
	}
	if resumed.Reason != "resumed by Bob" || resumed.Rollout.Version != waiting.Rollout.Version || resumed.Index != 0 || waiting.Index != 1 {
		t.Errorf("resumed %+v, waiting %+v: the resume and the approval it leads to are one change", resumed, waiting)
	}
	if waiting.Rollout.Status != rollout.WaitingApproval || waiting.Rollout.Wave == nil || waiting.Rollout.Wave.Name != "rest" {
		t.Errorf("waiting %+v, want waiting_approval on wave rest", waiting)
	}
	if approved.Rollout.Counts["in_progress"] == 0 || completed.Rollout.Status != rollout.Completed || completed.Rollout.Wave != nil ||
		completed.Rollout.Counts["succeeded"] != 5 || completed.Rollout.Counts["failed"] != 1 {
		t.Errorf("approved %+v completed %+v: the approval starts the rest, the completion counts 5 succeeded and 1 failed", approved, completed)
	}
}

// onFailure: rollback notifies the rollback's start and its end.
func TestNotifications_RolledBack(t *testing.T) {
	r := newRig(t)
	ids := r.agents(4, nil)
	r.behaviour["a03"] = "fail"
	r.start("r-rb", policy.KindConfig, policy.Spec{OnFailure: policy.OnFailureRollback, HealthWait: time.Minute}, ids, nil)
	r.run(nil)
	r.wantStatus("r-rb", rollout.RolledBack)
	es := r.notifications("r-rb")
	wantTypes(t, es, "rollout.started", "rollout.rolling_back", "rollout.rolled_back")
	if rb := es[2]; rb.Rollout.Status != rollout.RolledBack || rb.Rollout.Counts["rolled_back"] != 4 || rb.Reason == "" {
		t.Errorf("rolled_back %+v, want every target rolled back, with the reason", rb)
	}
}

// Evaluate tasks that fail before they run, and tasks whose evaluation was stored
// but whose answer was lost, are retried by Step Functions: the retry finds
// nothing to change and writes nothing, so no event is written twice and
// none is missing.
func TestNotifications_RetriedTasksWriteNoEventTwice(t *testing.T) {
	r := newRig(t)
	ids := r.agents(3, nil)
	r.failEval.Store(2)
	r.loseEval.Store(3)
	r.start("r-retry", policy.KindConfig, policy.Spec{HealthWait: time.Minute}, ids, nil)
	r.run(nil)
	r.wantStatus("r-retry", rollout.Completed)
	if r.loseEval.Load() != 0 {
		t.Fatal("the answers were never lost: the test proves nothing")
	}
	wantTypes(t, r.notifications("r-retry"), "rollout.started", "rollout.completed")
}
