package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// TestWatch_StalledRolloutShowsWhyNoFinish: a rollout whose wave failed
// and paused it has no predicted finish (nothing progresses until a
// person acts) and says why; the failed wave's bar shows the failure as x,
// not as done.
func TestWatch_StalledRolloutShowsWhyNoFinish(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	if _, err := c.srv.Client(clienttest.OperatorToken).Approve(t.Context(), id, 1); err != nil {
		t.Fatal(err)
	}
	c.srv.Evaluate(id)
	c.srv.UpdateAgent("e02", func(a *agent.Agent) {
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: agent.ConfigFailed, Error: "unknown receiver", Since: c.srv.Now()}
	})
	c.srv.Evaluate(id)
	c.now = c.srv.Now().Add(2 * time.Second)
	r := c.run(clienttest.ViewerToken, "watch", id)
	r.has(t, "config · paused",
		"no predicted finish: the rollout is paused: no target starts until it is resumed",
		"1 rest    failed     [xxxxxxxxxx----------] 1/2  in_progress 1 · failed 1")
	if strings.Contains(r.stdout, "predicted finish ") {
		t.Errorf("a paused rollout shows a predicted finish:\n%s", r.stdout)
	}
	get := c.run(clienttest.ViewerToken, "rollouts", "get", id).ok(t)
	get.has(t, "no predicted finish: the rollout is paused")
}

// TestFrame_WindowLine: when every target left waits for a maintenance
// window, the header says that nothing progresses before the first start.
func TestFrame_WindowLine(t *testing.T) {
	now := t0
	opens := t0.Add(7 * time.Hour)
	waiting := &client.TargetCounts{WaitingWindow: 17, Succeeded: 3}
	cases := []struct {
		status rollout.Status
		counts *client.TargetCounts
		start  *time.Time
		want   string
	}{
		{status: rollout.Running, counts: waiting, start: &opens, want: "nothing progresses before 16:00 (in 7h): 17 targets wait for a maintenance window"},
		{status: rollout.Running, counts: waiting, want: "nothing progresses now: 17 targets wait for a maintenance window"},                               // no prediction
		{status: rollout.Running, counts: &client.TargetCounts{WaitingWindow: 1}, want: "nothing progresses now: 1 target waits for a maintenance window"}, // one
		{status: rollout.Running, counts: &client.TargetCounts{WaitingWindow: 17, InProgress: 1}, start: &opens},                                           // one works: it progresses
		{status: rollout.Paused, counts: waiting, start: &opens},                                                                                           // the prediction says why
		{status: rollout.Completed, counts: waiting},                                                                                                       // over
	}
	for i, c := range cases {
		r := client.Rollout{Status: c.status, TargetCounts: c.counts}
		if c.start != nil {
			r.Prediction = &client.Prediction{Start: &client.When{At: c.start}}
		}
		if got := windowLine(r, now); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}
