package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// LastTargets: per agent the target of the newest rollout of the kind, with
// that rollout's status; targets of a rollout that does not exist are
// skipped.
func TestLastTargets(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	old, ots := newRollout("r-old", 3, 1, t0)
	must(t, s.CreateRollout(ctx, old, ots))
	old.Version, old.Status = 1, rollout.Completed
	must(t, s.SaveEvaluation(ctx, old, nil))
	cur, cts := newRollout("r-new", 2, 1, t0.Add(time.Hour))
	must(t, s.CreateRollout(ctx, cur, cts))
	// An orphan target, newer than both, as left by a creation that crashed.
	orphan, _ := newRollout("r-orphan", 0, 1, t0.Add(2*time.Hour))
	puts := []types.WriteRequest{}
	it, err := encodeTarget(orphan, rollout.Target{RolloutID: "r-orphan", AgentID: "a00000", Status: rollout.TargetPending}, 1)
	must(t, err)
	puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	must(t, s.batchWriteAll(ctx, s.names.Targets, puts))

	got, err := s.LastTargets(ctx, []string{"a00000", "a00001", "a00002", "a-none"}, policy.KindConfig)
	must(t, err)
	want := map[string]string{"a00000": "r-new pending", "a00001": "r-new pending", "a00002": "r-old completed"}
	if len(got) != len(want) {
		t.Fatalf("last targets %v", got)
	}
	for id, w := range want {
		if g := got[id].Target.RolloutID + " " + string(got[id].RolloutStatus); g != w {
			t.Errorf("agent %s: %s, want %s", id, g, w)
		}
	}
	if v, err := s.LastTargets(ctx, []string{"a00000"}, policy.KindVersion); err != nil || len(v) != 0 {
		t.Fatalf("version kind: %v %v, want none", v, err)
	}
}

// The planner end to end on the DynamoDB store: create, nothing new,
// stragglers, supersede on a new commit.
func TestPlanner_OnDynamoDB(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	must(t, s.PutRevision(ctx, rev("c1", "edge"), t0))
	for i := 0; i < 3; i++ {
		seed(t, s, agentOf(fmt.Sprintf("a%d", i), "edge"))
	}
	n := 0
	p := planner.Planner{Store: s, Clock: func() time.Time { return t0.Add(time.Duration(n) * time.Minute) },
		NewID: func() string { n++; return fmt.Sprintf("r%d", n) }}

	// First run: agents without a desired hash are bootstrapped, no rollout.
	d, err := p.Run(ctx, "edge", policy.KindConfig)
	must(t, err)
	if d.Created != nil || len(d.Bootstrap) != 3 {
		t.Fatalf("first run: %+v", d)
	}
	h1 := rev("c1", "edge").Configs["edge"].Hash
	byID, err := s.AgentsByID(ctx, []string{"a0", "a1", "a2"})
	must(t, err)
	for id, a := range byID {
		if a.DesiredHash != h1 {
			t.Fatalf("agent %s desired %q, want the bootstrap hash", id, a.DesiredHash)
		}
	}

	// A new commit renders another hash: a rollout.
	must(t, s.PutRevision(ctx, rev("c2", "edge"), t0.Add(time.Hour)))
	d, err = p.Run(ctx, "edge", policy.KindConfig)
	must(t, err)
	if d.Created == nil || len(d.Created.Targets) != 3 {
		t.Fatalf("second run: %+v", d)
	}
	first := d.Created.Rollout.ID
	if d, err := p.Run(ctx, "edge", policy.KindConfig); err != nil || d.Created != nil || d.Ended != nil || d.Updated != nil {
		t.Fatalf("a run with nothing new changes nothing: %+v %v", d, err)
	}

	// A late agent joins the active rollout's last wave.
	late := agentOf("a9", "edge")
	late.RemoteConfig.Hash = h1
	seed(t, s, late)
	must(t, s.SetDesiredHash(ctx, []string{"a9"}, h1))
	d, err = p.Run(ctx, "edge", policy.KindConfig)
	must(t, err)
	if d.Updated == nil || len(d.Stragglers) != 1 || d.Stragglers[0].AgentID != "a9" {
		t.Fatalf("straggler run: %+v", d)
	}
	if _, ts, err := s.LoadRollout(ctx, first); err != nil || len(ts) != 4 {
		t.Fatalf("rollout %s after stragglers: %d targets %v", first, len(ts), err)
	}

	// Another commit supersedes the active rollout and creates the next.
	must(t, s.PutRevision(ctx, rev("c3", "edge"), t0.Add(2*time.Hour)))
	d, err = p.Run(ctx, "edge", policy.KindConfig)
	must(t, err)
	if d.Ended == nil || d.Created == nil {
		t.Fatalf("supersede run: %+v", d)
	}
	old, oldTs, err := s.LoadRollout(ctx, first)
	must(t, err)
	if old.Status != rollout.Superseded {
		t.Fatalf("old rollout %s, want superseded", old.Status)
	}
	for _, tg := range oldTs {
		if tg.Status != rollout.TargetCancelled {
			t.Fatalf("target %s of the superseded rollout is %s", tg.AgentID, tg.Status)
		}
	}
	a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig)
	must(t, err)
	if a == nil || a.Rollout.ID != d.Created.Rollout.ID || a.Rollout.ToRef != rev("c3", "edge").Configs["edge"].Hash {
		t.Fatalf("active %+v", a)
	}
	entries, err := s.AuditOf(ctx, "rollout", a.Rollout.ID, "", 0)
	must(t, err)
	if len(entries.Items) != 1 || entries.Items[0].Action != "rollout.create" {
		t.Fatalf("audit of the new rollout: %+v", entries.Items)
	}
}
