package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// TestWatch_ApprovalHintNamesWhoMayApprove: the views name the actor the
// rule of no self-approval counts (the admin who applied the revision,
// beside createdBy gitops), the hint says who may approve and, with the
// local stack's operator token in the environment, how to approve with
// it; the applier is refused naming the same actor, and the operator
// approves as the hint says.
func TestWatch_ApprovalHintNamesWhoMayApprove(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	t.Setenv("MYRIARCH_OPERATOR_TOKEN", clienttest.OperatorToken)
	r := c.run(clienttest.AdminToken, "watch", id, "--until", "waiting_approval").ok(t)
	r.has(t, "origin gitops · created by gitops (revision applied by CI pipeline) at ",
		"wave 1 waits for approval: myrctl rollouts approve "+id+" --wave 1",
		"    approvals 0/1 · expires in 72h\n",
		"    who may approve: an operator or admin (rollouts:operate) other than CI pipeline (applied its revision)\n",
		"    with the local stack's operator token: MYRIARCH_TOKEN=$MYRIARCH_OPERATOR_TOKEN myrctl rollouts approve "+id+" --wave 1\n")
	c.run(clienttest.AdminToken, "rollouts", "get", id).ok(t).has(t, "created by gitops (revision applied by CI pipeline)",
		"who may approve: an operator or admin (rollouts:operate) other than CI pipeline (applied its revision)")

	c.run(clienttest.AdminToken, "rollouts", "approve", id, "--wave", "1").refused(t,
		`409 self_approval: CI pipeline applied the revision that created this rollout and cannot approve it; another operator must approve wave 1 "rest"`)
	c.run(clienttest.OperatorToken, "rollouts", "approve", id, "--wave", "1").ok(t)

	// With the operator's token itself, or without the local stack's
	// tokens in the environment, the plain command is the way.
	for _, env := range []string{clienttest.OperatorToken, ""} {
		t.Setenv("MYRIARCH_OPERATOR_TOKEN", env)
		out := c.run(clienttest.OperatorToken, "rollouts", "get", id).ok(t).stdout
		if strings.Contains(out, "MYRIARCH_OPERATOR_TOKEN") {
			t.Errorf("MYRIARCH_OPERATOR_TOKEN=%q: the hint names the operator token to its holder:\n%s", env, out)
		}
	}
}

// The hint names who created a rollout of the UI and who approved the
// wave already, and no one for a rollout nobody applied through the API.
func TestWhoMayApprove(t *testing.T) {
	cases := []struct {
		r    string // the rollout as JSON
		want string
	}{
		{r: `{"createdBy": "gitops", "createdByActor": "gitops"}`, want: "who may approve: an operator or admin (rollouts:operate)"},
		{r: `{"createdBy": "Dana Operator", "createdByActor": "user:d"}`, want: "who may approve: an operator or admin (rollouts:operate) other than Dana Operator (created it)"},
		{r: `{"createdBy": "gitops", "createdByActor": "gitops", "appliedBy": [{"by": "local admin", "byActor": "token:a", "at": "2026-12-01T10:00:00Z"}, {"by": "CI", "byActor": "token:c", "at": "2026-12-01T09:00:00Z"}]}`,
			want: "who may approve: an operator or admin (rollouts:operate) other than local admin (applied its revision), CI (applied its revision)"},
	}
	for _, c := range cases {
		var r client.Rollout
		var w client.Wave
		if err := json.Unmarshal([]byte(c.r), &r); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`{"index": 1, "name": "rest", "approvals": [{"by": "Sam Reviewer", "byActor": "user:s", "at": "2026-12-01T11:00:00Z"}]}`), &w); err != nil {
			t.Fatal(err)
		}
		want := c.want
		if strings.Contains(want, "other than") {
			want += ", Sam Reviewer (approved already)"
		} else {
			want += " other than Sam Reviewer (approved already)"
		}
		if got := whoMayApprove(r, w); got != want {
			t.Errorf("%s:\n got %q\nwant %q", c.r, got, want)
		}
	}
}
