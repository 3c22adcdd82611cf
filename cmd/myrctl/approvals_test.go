package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// waitingApprovalWith is waitingApproval with more of the policy's spec;
// myrctl's clock is the server's.
func (c *cli) waitingApprovalWith(more string) string {
	c.t.Helper()
	id := c.srv.ApplyEdgeFiles(c.t, 3, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", clienttest.CanaryPolicy+more))
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.srv.Advance(5 * time.Minute)
	c.srv.Evaluate(id)
	c.now = c.srv.Now()
	return id
}

// TestApprovals steps a rollout whose waves need two approvers through
// approve with a reason, the refusals of the rules, reject, resume and an
// approval with a freeze override; each row runs after the previous one.
func TestApprovals(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApprovalWith("  approvals: {required: 2, expiry: 24h}\n")
	steps := []struct {
		token string
		args  []string
		code  int
		out   []string // in order, on stdout (exit 0) or stderr
	}{
		{token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "1", "--reason", "canary green"}, code: 0, out: []string{
			"approve wave 1 \"rest\": rollout " + id + " is waiting_approval", `wave 1 "rest" waits for approval (1 of 2)`,
			"wave 1 approvals 1/2 (Dana Operator) · expires in 24h", "targets: pending 2 · succeeded 1"}}, // one of two
		{token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "1"}, code: 1, out: []string{"myrctl: 409 wave_already_approved: "}},                                                // nobody counts twice
		{token: clienttest.AdminToken, args: []string{"approve", id, "--wave", "1"}, code: 1, out: []string{"myrctl: 409 self_approval: CI pipeline applied the revision that created this rollout"}}, // the applier of the revision
		{token: clienttest.ReviewerToken, args: []string{"reject", id}, code: 2, out: []string{`required flag(s) "wave" not set`}},                                                                    // the wave is required
		{token: clienttest.ReviewerToken, args: []string{"reject", id, "--wave", "1", "--freeze-override"}, code: 2, out: []string{"unknown flag: --freeze-override"}},                                // reject bypasses nothing
		{token: clienttest.ReviewerToken, args: []string{"reject", id, "--wave", "rest", "--reason", "not during the sale"}, code: 0, out: []string{
			"reject wave 1 \"rest\": rollout " + id + " is paused", `wave 1 "rest" rejected by Sam Reviewer: not during the sale`}}, // stopped, onFailure pause
		{token: clienttest.ViewerToken, args: []string{"get", id}, code: 0, out: []string{
			"1 rest    failed", "wave 1 rejected by Sam Reviewer at 2026-11-30T09:05:00Z: not during the sale · resume asks for its approval again"}},
		{token: clienttest.OperatorToken, args: []string{"resume", id}, code: 0, out: []string{
			"resume: rollout " + id + " is waiting_approval", "wave 1 approvals 0/2 · expires in 24h"}}, // asked again
		{token: clienttest.ReviewerToken, args: []string{"approve", id, "--wave", "1", "--freeze-override", "--reason", "hotfix"}, code: 0, out: []string{
			"approve wave 1 \"rest\": rollout " + id + " is waiting_approval", "wave 1 approvals 1/2 (Sam Reviewer)",
			"freezes bypassed by Sam Reviewer at 2026-11-30T09:05:00Z: hotfix"}},
	}
	for i, s := range steps {
		r := c.run(s.token, append([]string{"rollouts"}, s.args...)...)
		got := r.stdout
		if s.code != 0 {
			got = r.stderr
		}
		if r.code != s.code {
			t.Fatalf("step %d %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", i, s.args, r.code, s.code, r.stdout, r.stderr)
		}
		(result{stdout: got}).has(t, s.out...)
	}
	entries, err := c.srv.Client(clienttest.ViewerToken).AllAudit(t.Context(), "rollout", id, 0)
	if err != nil || len(entries) != 7 || entries[0].Action != "rollout.approve" || entries[0].Details["freezeOverride"] != true ||
		entries[2].Action != "rollout.reject" || entries[2].Details["reason"] != "not during the sale" {
		t.Fatalf("audit %+v, %v: want create, 5 decided actions and the approval with freezeOverride last", entries, err)
	}
}

// A freeze holds the canary's stage: watch shows it frozen with the freeze
// and how to bypass it; resume --freeze-override starts it.
func TestWatch_FrozenStageAndFreezeOverride(t *testing.T) {
	c := newCLI(t)
	freeze := "  freezes:\n    - {name: holidays, from: \"2026-11-30T08:00:00Z\", until: \"2026-12-02T00:00:00Z\"}\n"
	id := c.srv.ApplyEdgeFiles(t, 3, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", clienttest.CanaryPolicy+freeze))
	c.srv.Evaluate(id)
	c.onSleep = func(int) { c.onSleep = nil }
	r := c.run(clienttest.ViewerToken, "watch", id)
	frame := frames(r.stdout)[0]
	(result{stdout: frame}).has(t, "Stages 0/2", "canary  frozen   1 pass(es), batches 0/1",
		`    held: freeze "holidays" (every region) until 2026-12-02T00:00:00Z`,
		"rest    pending  1 pass(es), batches 0/1",
		`stage canary is frozen; to bypass every freeze: myrctl rollouts resume `+id+` --freeze-override --reason "…"`)
	c.run(clienttest.OperatorToken, "rollouts", "resume", id, "--freeze-override", "--reason", "hotfix for INC-4711").ok(t).has(t,
		"resume (freeze override): rollout "+id+" is running",
		"freezes bypassed by Dana Operator at 2026-11-30T09:00:00Z: hotfix for INC-4711", "targets: in_progress 1 · pending 2")
	out := c.run(clienttest.ViewerToken, "rollouts", "get", id).ok(t)
	out.has(t, "freezes bypassed by Dana Operator", "Stages 0/2", "canary  running")
	if strings.Contains(out.stdout, "held:") || strings.Contains(out.stdout, "is frozen") {
		t.Errorf("the override lifts the hold:\n%s", out.stdout)
	}
}

// redExports reads export-failures red and the dry-run metric refused red
// for every pass.
type redExports struct{}

func (redExports) Read(_ context.Context, _ policy.Health, req gate.Request) []gate.Result {
	high, refused := 0.2, 14.0
	var out []gate.Result
	for _, p := range req.Passes {
		out = append(out,
			gate.Result{Kind: gate.KindMetric, Name: "export-failures", Scope: p.Name, Red: true, Value: &high, Detail: "value 0.2 above 0.01"},
			gate.Result{Kind: gate.KindMetric, Name: "refused", Scope: p.Name, Red: true, Value: &refused, Detail: "value 14 above 10", DryRun: true})
	}
	return out
}

// rollouts get shows a baking stage's gate as the server read it: the
// readings, the red ones in a row, the next reading, the last red result
// and the dry-run one beside it.
func TestRolloutsGet_StageGate(t *testing.T) {
	c := newCLI(t)
	gated := strings.Replace(clienttest.CanaryPolicy, "      selector: {matchAttributes: {labels.wave: canary}}\n",
		"      selector: {matchAttributes: {labels.wave: canary}}\n      bake: 2m\n", 1) +
		"  health:\n    failuresToStop: 2\n    metrics:\n      - {name: export-failures, query: q, max: 0.01}\n      - {name: refused, query: r, max: 10, dryRun: true}\n"
	id := c.srv.ApplyEdgeFiles(t, 3, clienttest.FilesWithPolicy("receivers: {otlp: {}}\n", gated))
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.srv.Advance(5 * time.Minute)
	c.srv.Evaluate(id) // the canary bakes 2m
	c.srv.Advance(30 * time.Second)
	c.srv.ReadGates(id, redExports{})
	c.now = c.srv.Now().Add(12 * time.Second)
	c.run(clienttest.ViewerToken, "rollouts", "get", id).ok(t).has(t,
		"Stages 0/2",
		"canary  baking   1 pass(es), batches 1/1 · bake ends in 1m18s",
		"    gate: 1 reading, 1 red in a row (stops at 2) · next reading in 18s",
		"    last red: metric export-failures (canary): value 0.2 above 0.01",
		"    also red: metric refused (canary): value 14 above 10 [dry run]",
		"rest    pending")
}

func TestApprovalsLine(t *testing.T) {
	expires := at(24 * time.Hour)
	dana := client.Decision{By: "Dana Operator", At: t0}
	sam := client.Decision{By: "Sam Reviewer", At: t0}
	cases := []struct {
		w    client.Wave
		now  time.Duration // after t0
		want string
	}{
		{w: client.Wave{Status: "waiting_approval", ApprovalsRequired: 2, ApprovalExpiresAt: expires}, now: 0, want: "approvals 0/2 · expires in 24h"},                                                               // none yet
		{w: client.Wave{Status: "waiting_approval", ApprovalsRequired: 2, Approvals: []client.Decision{dana}, ApprovalExpiresAt: expires}, now: time.Minute, want: "approvals 1/2 (Dana Operator) · expires in 23h"}, // hours truncated
		{w: client.Wave{Status: "waiting_approval", ApprovalsRequired: 3, Approvals: []client.Decision{dana, sam}, ApprovalExpiresAt: expires}, now: 22*time.Hour + 30*time.Minute, want: "approvals 2/3 (Dana Operator, Sam Reviewer) · expires in 1h30m"},
		{w: client.Wave{Status: "waiting_approval", ApprovalExpiresAt: expires}, now: 24*time.Hour - 90*time.Second, want: "approvals 0/1 · expires in 1m30s"}, // a server without approvalsRequired: 1
		{w: client.Wave{Status: "waiting_approval", ApprovalsRequired: 1, ApprovalExpiresAt: expires}, now: 24 * time.Hour, want: "approvals 0/1 · expired"},   // the engine stops it next
		{w: client.Wave{Status: "waiting_approval", ApprovalsRequired: 1}, now: 0, want: "approvals 0/1"},                                                      // no expiry
		{w: client.Wave{Status: "waiting_approval", Approved: true, ApprovalsRequired: 1, Approvals: []client.Decision{dana}}, now: 0, want: ""},               // released, not yet started
		{w: client.Wave{Status: "running", ApprovalsRequired: 1, Approvals: []client.Decision{dana}}, now: 0, want: ""},                                        // started
	}
	for i, c := range cases {
		if got := approvalsLine(c.w, t0.Add(c.now)); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}
