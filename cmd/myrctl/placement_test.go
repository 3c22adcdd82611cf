package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// stagedEdge applies a revision whose rest wave splits by zone, over e01
// (the canary, eu-1/eu-1a), e02 (us-1/us-1b) and e03 (eu-1/eu-1b): the
// rollout's stages are canary, rest/eu-1b and rest/us-1b.
func (c *cli) stagedEdge() string {
	c.t.Helper()
	for i, where := range [][2]string{{"eu-1", "eu-1a"}, {"us-1", "us-1b"}, {"eu-1", "eu-1b"}} {
		attrs := map[string]string{"labels.fleet": "edge", "cloud.region": where[0], "cloud.availability_zone": where[1]}
		if i == 0 {
			attrs["labels.wave"] = "canary"
		}
		c.srv.PutAgent(clienttest.HealthyAgent(fmt.Sprintf("e%02d", i+1), attrs, "old", c.srv.Now()))
	}
	staged := strings.Replace(clienttest.CanaryPolicy, "    - {name: rest, percent: 100, requireApproval: true}\n",
		"    - {name: rest, percent: 100, requireApproval: true, by: zone}\n", 1)
	return c.srv.ApplyEdgeFiles(c.t, 0, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", staged))
}

// rollouts targets shows where each target of a rollout in stages sits,
// and --stage lists one stage's targets; a stage the rollout lacks is
// refused with its stages.
func TestRolloutsTargets_Stage(t *testing.T) {
	c := newCLI(t)
	id := c.stagedEdge()
	c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).has(t,
		"AGENT  WAVE  STAGE       BATCH              STATUS   FROM  TO            DETAIL\n",
		"e01    0     canary      canary#0           pending  old   0bbfc5ca6bc6\n",
		"e02    1     rest/us-1b  rest/us-1/us-1b#0  pending  old   0bbfc5ca6bc6\n",
		"e03    1     rest/eu-1b  rest/eu-1/eu-1b#0  pending  old   0bbfc5ca6bc6\n")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "rest/eu-1b").ok(t).has(t,
		"AGENT  WAVE  STAGE       BATCH              STATUS   FROM  TO            DETAIL\n",
		"e03    1     rest/eu-1b  rest/eu-1/eu-1b#0  pending  old   0bbfc5ca6bc6\n")
	if out := c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "rest/eu-1b").ok(t).stdout; strings.Contains(out, "e01") || strings.Contains(out, "e02") {
		t.Errorf("--stage rest/eu-1b lists other stages' targets:\n%s", out)
	}
	page := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "canary", "-o", "json").ok(t))
	if len(page.Items) != 1 || page.Items[0].AgentID != "e01" || page.Items[0].Stage != "canary" || page.Items[0].Pass != "canary" ||
		page.Items[0].Batch == nil || *page.Items[0].Batch != 0 {
		t.Fatalf("targets of the canary stage: %+v", page)
	}
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "rest/eu-1b", "--wave", "canary").ok(t).has(t, "no targets")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "eu-1b").refused(t,
		`400 request_invalid: rollout `+id+` has no stage named "eu-1b"; its stages are "canary", "rest/eu-1b", "rest/us-1b"`)
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "").usage(t, "--stage")
}

// A rollout without stages keeps its listing: no stage or batch columns,
// and --stage is refused by the server.
func TestRolloutsTargets_StageOfARolloutWithoutStages(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 2, "receivers: {otlp: {}}\n")
	out := c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).stdout
	if !strings.HasPrefix(out, "AGENT  WAVE  STATUS ") {
		t.Errorf("listing of a rollout without stages:\n%s", out)
	}
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--stage", "canary").refused(t,
		`400 request_invalid: rollout `+id+` has no stage named "canary"; it has no stages: its waves run whole`)
}

// watch names the batch of each target of a rollout in stages beside its
// wave, as logs name it.
func TestFrame_TargetsNameTheirBatch(t *testing.T) {
	v := pageOf(0, "")
	one := 1
	v.targets = []client.Target{
		{AgentID: "a", Status: rollout.TargetInProgress, Wave: 1, Stage: "rest/eu-2a+us-1a", Pass: "rest/eu-2/eu-2a", Batch: &one},
		{AgentID: "b", Status: rollout.TargetPending, Wave: 0},
	}
	var b strings.Builder
	v.writeTargets(&b)
	(result{stdout: b.String()}).has(t, "    a  wave 1 · rest/eu-2/eu-2a#1", "    b  wave 0\n")
}
