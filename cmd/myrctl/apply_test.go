package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestApply_PlansTheFleets(t *testing.T) {
	c := newCLI(t)
	c.srv.AddEdgeAgents(3)
	dir := writeDir(t, clienttest.Files("receivers: {otlp: {}}\n"))
	r := c.run(clienttest.AdminToken, "apply", dir).ok(t)
	commit := contentHash(mustRead(t, dir))
	r.has(t, "applied revision "+commit+" (content hash)", "3 agents, 3 assigned, 3 moved, 0 unassigned",
		"edge  config   rollout r-", "created", "edge  version  no rollout")
	rs, err := c.srv.Client(clienttest.ViewerToken).AllRollouts(t.Context(), client.RolloutFilter{}, 0)
	if err != nil || len(rs) != 1 || rs[0].Policy.Commit != commit {
		t.Fatalf("rollouts %+v, %v: want one of commit %s", rs, err, commit)
	}
}

// TestApply_SaysWhoWasBootstrapped: agents that had no configuration get
// the fleet's directly; apply says so rather than that no agent is
// relevant. With one more agent on another configuration, the rollout
// comes beside them.
func TestApply_SaysWhoWasBootstrapped(t *testing.T) {
	c := newCLI(t)
	for _, id := range []string{"n1", "n2", "n3"} {
		c.srv.PutAgent(clienttest.HealthyAgent(id, map[string]string{"labels.fleet": "edge"}, "", t0))
	}
	dir := writeDir(t, clienttest.Files("receivers: {otlp: {}}\n"))
	c.run(clienttest.AdminToken, "apply", dir, "--commit", "c1").ok(t).has(t,
		"3 agents, 3 assigned, 3 moved, 0 unassigned\n",
		"  edge  config   3 agents bootstrapped with the fleet's configuration (they had none), no rollout needed\n",
		"  edge  version  no rollout")
	res := decodeOut[client.ApplyResult](t, c.run(clienttest.AdminToken, "apply", dir, "--commit", "c1", "-o", "json").ok(t))
	if p := res.Fleets[0].Plans[0]; p.Bootstrapped != 0 || p.Note != "no rollout: no agent is relevant" {
		t.Fatalf("applied again: %+v, want nobody bootstrapped", p)
	}

	c.srv.PutAgent(clienttest.HealthyAgent("n4", map[string]string{"labels.fleet": "edge"}, "", t0))
	c.srv.AddEdgeAgents(1)
	c.run(clienttest.AdminToken, "apply", dir, "--commit", "c2").ok(t).has(t,
		"  edge  config   rollout r-", " created; 1 agent bootstrapped with the fleet's configuration (it had none)\n")
}

func TestApply_JSON(t *testing.T) {
	c := newCLI(t)
	c.srv.AddEdgeAgents(2)
	dir := writeDir(t, clienttest.Files("receivers: {otlp: {}}\n"))
	res := decodeOut[client.ApplyResult](t, c.run(clienttest.AdminToken, "apply", dir, "--commit", "abc123", "-o", "json").ok(t))
	if res.Commit != "abc123" || len(res.Fleets) != 1 || !res.Fleets[0].Plans[0].Created || res.Agents.Assigned != 2 {
		t.Fatalf("apply result %+v", res)
	}
}

func TestApply_InvalidAppliesNothing(t *testing.T) {
	c := newCLI(t)
	r := c.run(clienttest.AdminToken, "apply", "testdata/broken")
	r.refused(t, "422 revision_invalid: the revision has")
	for _, want := range []string{"error policy_not_found at fleets/edge.yaml", "error wave_invalid"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks the issue %q:\n%s", want, r.stderr)
		}
	}
	if _, err := c.srv.Client(clienttest.ViewerToken).CurrentRevision(t.Context()); !client.IsCode(err, "revision_not_found") {
		t.Fatalf("a revision was applied: %v", err)
	}
}

func TestApply_DryRun(t *testing.T) {
	c := newCLI(t)
	good := writeDir(t, clienttest.Files("receivers: {otlp: {}}\n"))
	c.run(clienttest.ViewerToken, "apply", "--dry-run", good, "--commit", "c1").ok(t).
		has(t, "revision c1 (--commit) is valid: fleets edge; policies canary-then-all; 0 errors, 0 warnings")
	bad := c.run(clienttest.ViewerToken, "apply", "--dry-run", "testdata/broken")
	if bad.code != 1 || !strings.Contains(bad.stdout, "error policy_not_found") || !strings.Contains(bad.stdout, "is invalid") {
		t.Fatalf("exit %d, want 1 with the issues:\n%s", bad.code, bad.stdout)
	}
	v := decodeOut[client.Validation](t, c.run(clienttest.ViewerToken, "apply", "--dry-run", "testdata/broken", "-o", "json"))
	if v.Valid || len(v.Issues) == 0 {
		t.Fatalf("validation %+v", v)
	}
	if _, err := c.srv.Client(clienttest.ViewerToken).CurrentRevision(t.Context()); !client.IsCode(err, "revision_not_found") {
		t.Fatalf("a dry run applied the revision: %v", err)
	}
}

func TestApply_Refusals(t *testing.T) {
	c := newCLI(t)
	dir := writeDir(t, clienttest.Files("x: 1\n"))
	r := c.run(clienttest.OperatorToken, "apply", dir)
	r.refused(t, "403 forbidden: the role operator lacks the permission revisions:apply")
	if !strings.Contains(r.stderr, "missing permission: revisions:apply") {
		t.Errorf("stderr does not name the permission:\n%s", r.stderr)
	}
	c.run(clienttest.AdminToken, "apply", "testdata/nope").usage(t, "nope")       // an unreadable directory
	c.run(clienttest.AdminToken, "apply").usage(t, "accepts 1 arg(s)")            // no directory
	c.run(clienttest.AdminToken, "apply", dir, "-o", "yaml").usage(t, "--output") // an unknown format
}

// TestApply_DefaultCommit: Git's HEAD in a work tree, else a hash of the
// contents that changes with them.
func TestApply_DefaultCommit(t *testing.T) {
	files := clienttest.Files("a: 1\n")
	plain := writeDir(t, files)
	hash := contentHash(mustRead(t, plain))
	if !strings.HasPrefix(hash, "content-") || len(hash) != len("content-")+12 {
		t.Fatalf("content hash %q", hash)
	}
	files["configs/edge.yaml"] = "a: 2\n"
	if other := contentHash(mustRead(t, writeDir(t, files))); other == hash {
		t.Fatal("other contents, same content hash")
	}
	if got, how := defaultCommit(t.Context(), plain, mustRead(t, plain)); got != hash || how != "content hash" {
		t.Fatalf("outside Git: %s (%s), want %s", got, how, hash)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := writeDir(t, files)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "r"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	head, _ := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if got, how := defaultCommit(t.Context(), repo, nil); got != strings.TrimSpace(string(head)) || how != "git HEAD" {
		t.Fatalf("in Git: %s (%s), want HEAD %s", got, how, head)
	}
}

func mustRead(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	req, _, err := readRevision(t.Context(), dir, "given")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for p, s := range req.Files {
		out[p] = []byte(s)
	}
	return out
}
