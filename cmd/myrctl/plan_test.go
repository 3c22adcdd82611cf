package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// plan --dir with a changed configuration: the canary's times are local
// and relative, the rest follows the approval of wave 1, the finish too.
func TestPlan_ProposedDirectory(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	dir := writeDir(t, clienttest.Files("receivers: {otlp: {}, hostmetrics: {}}\n"))
	c.now = t0.Add(-2 * time.Minute).In(time.FixedZone("CET", 3600))
	r := c.run(clienttest.ViewerToken, "plan", "--fleet", "edge", "--dir", dir, "--commit", "c2").ok(t)
	r.has(t, "Plan · fleet edge · config → ", "revision c2",
		"Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@c2",
		"supersedes rollout",
		"3 relevant agent(s), 3 target(s), 0 excluded",
		"Waves",
		"0 canary", "1 target(s)", "starts 10:00 (in 2m)", "ends 10:05 (in 7m20s)",
		"1 rest", "2 target(s)", "after approval", "starts at the approval of wave 1", "ends 5m20s after the approval of wave 1",
		"Approval of wave 1 rest: asked 10:05 (in 7m20s)",
		"Finish 5m20s after the approval of wave 1 · pessimistic 5m41s after the approval of wave 1",
		"Tolerance: up to 21s later than the finish (the pessimistic finish: apply times at their 90th percentile, 250ms for each of 28 evaluations); sooner when agents apply faster",
		"Apply time 20s, pessimistic 40s (default, 0 sample(s))",
		"Assumptions", "  - every agent reports the new configuration 20s after its start")
}

// Without --dir the applied revision is planned; its rollout runs already.
func TestPlan_AppliedRevision_NothingNew(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	r := c.run(clienttest.ViewerToken, "plan", "--fleet", "edge").ok(t)
	r.has(t, "Plan · fleet edge · config", "no new rollout: rollout "+id)
	if strings.Contains(r.stdout, "Waves") {
		t.Errorf("a plan that plans nothing shows waves:\n%s", r.stdout)
	}
	p := decodeOut[client.Plan](t, c.run(clienttest.ViewerToken, "plan", "--fleet", "edge", "-o", "json").ok(t))
	if p.Planned || p.ActiveRolloutID != id {
		t.Errorf("json plan %+v", p)
	}
}

func TestPlan_Refusals(t *testing.T) {
	c := newCLI(t)
	c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	c.run(clienttest.ViewerToken, "plan").usage(t, "--fleet is required")
	c.run(clienttest.ViewerToken, "plan", "--fleet", "edge", "--kind", "both").usage(t, "--kind must be config or version")
	c.run(clienttest.ViewerToken, "plan", "--fleet", "nowhere").refused(t, "404 fleet_not_found")
	c.run(clienttest.ViewerToken, "plan", "--fleet", "edge", "--kind", "config", "--version", "0.162.0").refused(t, "400 request_invalid")
}

// watch shows the predicted finish: after the approval of wave 1 while the
// canary runs.
func TestWatch_ShowsThePredictedFinish(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id) // e01 verifying since t0
	r := c.run(clienttest.ViewerToken, "watch", id)
	r.has(t, "predicted finish 5m20s after the approval of wave 1 · pessimistic 5m41s after the approval of wave 1")
	c.waitingApprovalThenApproved(id)
	c.now = c.srv.Now()
	r = c.run(clienttest.ViewerToken, "watch", id)
	r.has(t, "predicted finish 09:10 (in 5m20s) · pessimistic 09:10 (in 5m41s)")
}

// waitingApprovalThenApproved ends the canary's health wait and approves
// wave 1; the rest start.
func (c *cli) waitingApprovalThenApproved(id string) {
	c.t.Helper()
	c.srv.Advance(5 * time.Minute)
	c.srv.Evaluate(id)
	if _, err := c.srv.Client(clienttest.OperatorToken).Approve(c.t.Context(), id, 1); err != nil {
		c.t.Fatal(err)
	}
	c.srv.Evaluate(id)
}
