package main

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

// TestActions steps one rollout through every action, with the refusals
// on the way; each row runs after the previous one.
func TestActions(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	fail := func() { // e02 reports FAILED: the wave reaches maxFailed 1 and pauses
		c.srv.UpdateAgent("e02", func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: agent.ConfigFailed, Since: c.srv.Now()}
		})
		c.srv.Evaluate(id)
	}
	steps := []struct {
		before func()
		token  string
		args   []string
		code   int
		out    string // on stdout (exit 0) or stderr (exit 1, 2)
	}{
		{before: nil, token: clienttest.ViewerToken, args: []string{"pause", id}, code: 1, out: "myrctl: 403 forbidden: the role viewer lacks the permission rollouts:operate\n  missing permission: rollouts:operate"},                   // a viewer reads only
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "9"}, code: 1, out: "myrctl: 422 wave_not_found: "},                                                                                        // no such wave
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id}, code: 2, out: `required flag(s) "wave" not set`},                                                                                                    // the wave is required
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "canry"}, code: 1, out: `myrctl: 400 wave_name_unknown: rollout ` + id + ` has no wave named "canry"; its waves are 0 "canary", 1 "rest"`}, // a name it lacks
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "-1"}, code: 2, out: "--wave must be a wave's name or its index from 0, not -1"},                                                           // before anything is sent
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "rest"}, code: 0, out: "approve wave 1 \"rest\": rollout " + id + " is running\n  targets: in_progress 2 · succeeded 1"},                   // released, by name
		{before: nil, token: clienttest.OperatorToken, args: []string{"approve", id, "--wave", "1"}, code: 1, out: "myrctl: 409 wave_already_approved: wave 1 \"rest\" is already approved"},                                              // twice
		{before: nil, token: clienttest.OperatorToken, args: []string{"pause", id}, code: 0, out: "pause: rollout " + id + " is paused\n  paused by Dana Operator"},                                                                       // paused with the reason
		{before: nil, token: clienttest.OperatorToken, args: []string{"resume", id}, code: 0, out: "resume: rollout " + id + " is running"},                                                                                               // and on again
		{before: nil, token: clienttest.OperatorToken, args: []string{"retry-failed", id}, code: 1, out: "myrctl: 409 nothing_to_retry: rollout " + id + " has no failed targets, waves or stages to retry; it is running\n"},             // nothing failed yet
		{before: fail, token: clienttest.OperatorToken, args: []string{"retry-failed", id}, code: 0, out: "retry-failed: rollout " + id + " is running"},                                                                                  // the failed target runs again
		{before: fail, token: clienttest.OperatorToken, args: []string{"rollback", id}, code: 0, out: "rollback: rollout " + id + " is rolling_back"},                                                                                     // started targets go back
		{before: nil, token: clienttest.OperatorToken, args: []string{"resume", id}, code: 1, out: "myrctl: 409 action_not_allowed: "},                                                                                                    // not while rolling back
		{before: nil, token: clienttest.OperatorToken, args: []string{"abort", "r-nope"}, code: 1, out: "myrctl: 404 rollout_not_found: rollout r-nope does not exist"},                                                                   // no such rollout
		{before: nil, token: clienttest.OperatorToken, args: []string{"frobnicate", id}, code: 2, out: `unknown command "frobnicate"`},                                                                                                    // no such action
	}
	for i, s := range steps {
		if s.before != nil {
			s.before()
		}
		r := c.run(s.token, append([]string{"rollouts"}, s.args...)...)
		got := r.stdout
		if s.code != 0 {
			got = r.stderr
		}
		if r.code != s.code || !strings.Contains(got, s.out) {
			t.Fatalf("step %d %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", i, s.args, r.code, s.code, s.out, r.stdout, r.stderr)
		}
	}
	entries, err := c.srv.Client(clienttest.ViewerToken).AllAudit(t.Context(), "rollout", id, 0)
	// rollout.create and every decided action, refusals included (the
	// unknown wave name and nothing_to_retry too); none for the 403, the
	// usage errors or r-nope
	if err != nil || len(entries) != 11 {
		t.Fatalf("%d audit entries, %v: want 11", len(entries), err)
	}
}

func TestActions_JSONAndProblemJSON(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(2)
	r := decodeOut[client.Rollout](t, c.run(clienttest.OperatorToken, "rollouts", "abort", id, "-o", "json").ok(t))
	if r.ID != id || r.Status != rollout.Aborted || r.TargetCounts == nil || r.TargetCounts.Cancelled != 1 {
		t.Fatalf("abort answered %+v", r)
	}
	again := c.run(clienttest.OperatorToken, "rollouts", "abort", id, "-o", "json")
	again.refused(t, "409 action_not_allowed")
	p := decodeOut[client.Problem](t, again)
	if p.Status != 409 || p.Code != "action_not_allowed" || p.Type != "https://myriarch.dev/problems/action_not_allowed" {
		t.Fatalf("problem on stdout %+v", p)
	}
}
