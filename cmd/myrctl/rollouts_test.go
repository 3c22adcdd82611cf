package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestRolloutsList(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	c.run(clienttest.ViewerToken, "rollouts", "list").ok(t).has(t,
		"ID      FLEET  KIND    STATUS            STAGES  ORIGIN  TO            CREATED               CREATED BY",
		id+"  edge   config  waiting_approval  -       gitops  0bbfc5ca6bc6  2026-11-30T09:00:00Z  gitops")
	filters := []struct {
		args []string
		want int
	}{
		{args: []string{"--fleet", "edge"}, want: 1},                      // the fleet's rollout
		{args: []string{"--fleet", "core"}, want: 0},                      // another fleet
		{args: []string{"--kind", "version"}, want: 0},                    // another kind
		{args: []string{"--status", "running,waiting_approval"}, want: 1}, // one of the statuses
		{args: []string{"--status", "completed"}, want: 0},                // not in the status
		{args: []string{"--kind", "config", "--limit", "1"}, want: 1},     // a limit
	}
	for _, f := range filters {
		page := decodeOut[client.Page[client.Rollout]](t, c.run(clienttest.ViewerToken, append([]string{"rollouts", "list", "-o", "json"}, f.args...)...).ok(t))
		if len(page.Items) != f.want {
			t.Errorf("%v: %d rollouts, want %d", f.args, len(page.Items), f.want)
		}
	}
	c.run(clienttest.ViewerToken, "rollouts", "list", "--fleet", "core").ok(t).has(t, "no rollouts")
	c.run(clienttest.ViewerToken, "rollouts", "list", "--kind", "configs").usage(t, "--kind must be config or version")
	c.run(clienttest.ViewerToken, "rollouts", "list", "--status", "running,done").usage(t, `--status "done" is not one of`)
	c.run(clienttest.ViewerToken, "rollouts", "list", "--limit", "-1").usage(t, "--limit")
}

// The STAGES column is a staged rollout's progress, "-" for one without
// stages.
func TestPrintRollouts_Stages(t *testing.T) {
	var out strings.Builder
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	printRollouts(&globals{stdout: &out}, []client.Rollout{
		{ID: "r-zones", Fleet: "edge", Kind: "config", Status: "running", Origin: "gitops", ToRef: "0.162.0", CreatedAt: at, Progress: "2/4"},
		{ID: "r-flat", Fleet: "edge", Kind: "version", Status: "completed", Origin: "ui", ToRef: "0.161.0", CreatedAt: at},
	})
	want := `ID       FLEET  KIND     STATUS     STAGES  ORIGIN  TO       CREATED               CREATED BY
r-zones  edge   config   running    2/4     gitops  0.162.0  2026-11-30T09:00:00Z
r-flat   edge   version  completed  -       ui      0.161.0  2026-11-30T09:00:00Z
`
	if got := out.String(); got != want {
		t.Errorf("rollouts list\n%s\nwant\n%s", got, want)
	}
}

// TestRolloutsList_AllPages: every page unless --limit.
func TestRolloutsList_AllPages(t *testing.T) {
	c := newCLI(t)
	c.srv.AddEdgeAgents(2)
	for _, config := range []string{"a: 1\n", "a: 2\n", "a: 3\n"} { // each revision supersedes the last rollout
		if _, err := c.srv.Client(clienttest.AdminToken).ApplyRevision(t.Context(), client.RevisionRequest{Commit: config, Files: clienttest.Files(config)}); err != nil {
			t.Fatal(err)
		}
	}
	all := decodeOut[client.Page[client.Rollout]](t, c.run(clienttest.ViewerToken, "rollouts", "list", "-o", "json").ok(t))
	two := decodeOut[client.Page[client.Rollout]](t, c.run(clienttest.ViewerToken, "rollouts", "list", "-o", "json", "--limit", "2").ok(t))
	if len(all.Items) != 3 || len(two.Items) != 2 || two.Items[0].ID != all.Items[0].ID || all.Items[2].Status != "superseded" {
		t.Fatalf("all %d, limited %d", len(all.Items), len(two.Items))
	}
}

func TestRolloutsGet(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	c.run(clienttest.ViewerToken, "rollouts", "get", id).ok(t).has(t,
		"Rollout "+id+" · fleet edge · config · waiting_approval",
		"origin gitops · created by gitops (revision applied by CI pipeline) at 2026-11-30T09:00:00Z · to 0bbfc5ca6bc6",
		"Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17",
		"0 canary  completed         [####################] 1/1  succeeded 1",
		"1 rest    waiting_approval  [--------------------] 0/2  pending 2",
		"wave 1 waits for approval: myrctl rollouts approve "+id+" --wave 1")
	c.sameAsAPI(c.run(clienttest.ViewerToken, "rollouts", "get", id, "-o", "json").ok(t), "/api/v1/rollouts/"+id)
	c.run(clienttest.ViewerToken, "rollouts", "get", "r-nope").refused(t, "404 rollout_not_found: rollout r-nope does not exist")
	c.run(clienttest.ViewerToken, "rollouts", "get").usage(t, "accepts 1 arg(s)")
}

func TestRolloutsTargets(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 3, "receivers: {otlp: {}}\n")
	c.srv.Evaluate(id)
	c.srv.ApplyConfig("e01")
	c.srv.Evaluate(id)
	c.now = t0.Add(30 * time.Second)
	c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).has(t,
		"AGENT  WAVE  STATUS     FROM  TO            DETAIL",
		"e01    0     verifying  old   0bbfc5ca6bc6  4m30s left",
		"e02    1     pending    old   0bbfc5ca6bc6\n")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "1", "--status", "verifying").ok(t).has(t, "no targets")
	page := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "1", "-o", "json").ok(t))
	if len(page.Items) != 2 || page.Items[0].AgentID != "e02" || page.Next != "" {
		t.Fatalf("targets of wave 1: %+v", page)
	}
	c.sameAsAPI(c.run(clienttest.ViewerToken, "rollouts", "targets", id, "-o", "json").ok(t), "/api/v1/rollouts/"+id+"/targets")
	limited := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--limit", "1", "-o", "json").ok(t))
	if len(limited.Items) != 1 {
		t.Fatalf("--limit 1 gave %d targets", len(limited.Items))
	}
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--status", "verified").usage(t, "--status")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "-1").usage(t, "--wave")
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "canary").ok(t).has(t, "e01    0     verifying")
	byName := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "rest", "-o", "json").ok(t))
	if len(byName.Items) != 2 || byName.Items[0].AgentID != "e02" {
		t.Fatalf("targets of wave rest: %+v, want those of wave 1", byName)
	}
	c.run(clienttest.ViewerToken, "rollouts", "targets", id, "--wave", "all").refused(t,
		`400 wave_name_unknown: rollout `+id+` has no wave named "all"; its waves are 0 "canary", 1 "rest"`)
	c.run(clienttest.ViewerToken, "rollouts", "targets", "r-nope").refused(t, "404 rollout_not_found")
}

// TestRolloutsTargets_AllPages: more targets than one page of the API.
func TestRolloutsTargets_AllPages(t *testing.T) {
	c := newCLI(t)
	id := c.srv.ApplyEdge(t, 501, "receivers: {otlp: {}}\n")
	page := decodeOut[client.Page[client.Target]](t, c.run(clienttest.ViewerToken, "rollouts", "targets", id, "-o", "json").ok(t))
	if len(page.Items) != 501 {
		t.Fatalf("%d targets, want all 501", len(page.Items))
	}
	if out := c.run(clienttest.ViewerToken, "rollouts", "targets", id).ok(t).stdout; strings.Count(out, "\n") != 502 {
		t.Fatalf("%d lines, want a header and 501 targets", strings.Count(out, "\n"))
	}
}

// TestRolloutsList_Quiet: -q prints the ids alone, for a shell variable.
func TestRolloutsList_Quiet(t *testing.T) {
	c := newCLI(t)
	id := c.waitingApproval(3)
	if r := c.run(clienttest.ViewerToken, "rollouts", "list", "-q", "--fleet", "edge").ok(t); r.stdout != id+"\n" {
		t.Errorf("stdout %q, want the id alone", r.stdout)
	}
	if r := c.run(clienttest.ViewerToken, "rollouts", "list", "-q", "--fleet", "core").ok(t); r.stdout != "" {
		t.Errorf("stdout %q, want nothing for no rollouts", r.stdout)
	}
}
