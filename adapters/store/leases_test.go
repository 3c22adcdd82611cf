package store

import (
	"errors"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// A lease is renewed by its process only, ended by a drain, and read whole.
func TestLeases_RenewEndRead(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	started := t0.Add(-time.Minute)
	must(t, s.RenewLease(ctx, "task-a", started, t0.Add(90*time.Second)))
	must(t, s.RenewLease(ctx, "task-a", started, t0.Add(120*time.Second)))
	must(t, s.RenewLease(ctx, "task-b", started, t0.Add(30*time.Second)))
	if err := s.RenewLease(ctx, "task-a", t0, t0.Add(time.Hour)); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("a second process of task-a renewed its lease: %v", err)
	}
	must(t, s.EndLease(ctx, "task-b", started, t0.Add(10*time.Second)))
	if err := s.RenewLease(ctx, "task-b", started, t0.Add(time.Hour)); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("an ended lease was renewed: %v", err)
	}
	got, err := s.Leases(ctx)
	must(t, err)
	want := agent.Leases{"task-a": {Until: t0.Add(120 * time.Second)}, "task-b": {Until: t0.Add(10 * time.Second), Ended: true}}
	if len(got) != len(want) || got["task-a"] != want["task-a"] || got["task-b"] != want["task-b"] {
		t.Fatalf("Leases = %+v, want %+v", got, want)
	}
}

// The gateway's writes: a connect of a known agent is one read (the session
// opening) and one write, a change one write and no read; a stale
// disconnect of the old task never overwrites the new task's connect.
func TestSaveAgent_ConnectChangeDisconnect(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge"))
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1"))

	// Task A: the agent connects.
	s.ResetUsage()
	onA, found, vA, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	if !found {
		t.Fatal("a1 not found")
	}
	onA.Task, onA.Online, onA.ConnectedAt, onA.LastSeen = "A", true, t0.Add(time.Minute), t0.Add(time.Minute)
	vA, err = s.SaveAgent(ctx, onA, vA)
	must(t, err)
	onA.Health.Status = "StatusRecovering"
	onA.LastSeen = t0.Add(2 * time.Minute)
	vA, err = s.SaveAgent(ctx, onA, vA)
	must(t, err)
	if u := s.Usage(); u.ItemsRead != 1 || u.ItemsWritten != 2 {
		t.Fatalf("connect and one change: %s, want 1 read and 2 writes", u)
	}

	// The planner writes meanwhile: the next save reads once and keeps it.
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h2"))
	onA.Health.Status = agent.StatusOK
	vA, err = s.SaveAgent(ctx, onA, vA)
	must(t, err)

	// Task B: the agent moves there (task A's connection has not closed yet).
	onB, _, vB, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	onB.Task, onB.Online, onB.ConnectedAt, onB.LastSeen = "B", true, t0.Add(3*time.Minute), t0.Add(3*time.Minute)
	_, err = s.SaveAgent(ctx, onB, vB)
	must(t, err)

	// A late report of task A's old connection writes nothing over B's:
	// merged, it would bring back A's connection, and A's disconnect below
	// would then pass its guard.
	onA.Health.Status, onA.LastSeen = "StatusRecovering", t0.Add(3*time.Minute+time.Second)
	vA, err = s.SaveAgent(ctx, onA, vA)
	must(t, err)
	if got, _, err := s.GetAgent(ctx, "a1"); err != nil || got.Task != "B" || !got.ConnectedAt.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("a late report of the old connection: task %q connected %v (%v); want B's connection kept", got.Task, got.ConnectedAt, err)
	}

	// Task A's connection closes late: its disconnect must not win.
	onA.Online, onA.LastSeen = false, t0.Add(4*time.Minute)
	_, err = s.DisconnectAgent(ctx, onA, vA)
	must(t, err)
	got, _, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if !got.Online || got.Task != "B" || got.DesiredHash != "h2" || got.Fleet != "edge" || got.Health.Status != agent.StatusOK {
		t.Fatalf("after a stale disconnect: online %v task %q desired %q fleet %q health %q; want online on B, h2, edge, StatusOK",
			got.Online, got.Task, got.DesiredHash, got.Fleet, got.Health.Status)
	}

	// Task B's disconnect is written.
	onB.Online, onB.LastSeen = false, t0.Add(5*time.Minute)
	_, err = s.DisconnectAgent(ctx, onB, nil)
	must(t, err)
	got, _, err = s.GetAgent(ctx, "a1")
	must(t, err)
	if got.Online || got.Task != "B" || !got.LastSeen.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("after B's disconnect: online %v task %q lastSeen %v", got.Online, got.Task, got.LastSeen)
	}
}

// A new agent is created by its first save, pending assignment.
func TestSaveAgent_CreatesNewAgent(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	a := agentOf("n1", "")
	a.Task = "A"
	_, found, v, err := s.LoadAgent(ctx, "n1")
	must(t, err)
	if found || v != nil {
		t.Fatalf("unknown agent: found %v, version %v", found, v)
	}
	v, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	a.Health.Status = "StatusRecovering"
	s.ResetUsage()
	_, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	if u := s.Usage(); u.ItemsRead != 0 || u.ItemsWritten != 1 {
		t.Fatalf("a change after creation: %s, want no read", u)
	}
	got, err := s.GetAgentRecord(ctx, "n1")
	must(t, err)
	if got == nil || !got.AssignPending || got.Task != "A" || got.Health.Status != "StatusRecovering" {
		t.Fatalf("created agent %+v", got)
	}
}

// LoadAgents is LoadAgent for a page of the lagging index: one batch read,
// the current desired state, and versions that SaveAgent takes without a
// read.
func TestLoadAgents_BatchWithVersions(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("b1", "edge"))
	seed(t, s, agentOf("b2", "edge"))
	must(t, s.SetDesiredHash(ctx, []string{"b1", "b2"}, "h1"))
	s.ResetUsage()
	agents, versions, err := s.LoadAgents(ctx, []string{"b1", "b2", "missing"})
	must(t, err)
	if u := s.Usage(); u.Requests != 1 || len(agents) != 2 || agents["b1"].DesiredHash != "h1" || agents["b2"].DesiredHash != "h1" {
		t.Fatalf("LoadAgents = %d agents (%s), want b1 and b2 with h1 in one request", len(agents), u)
	}
	if _, found := agents["missing"]; found {
		t.Error("a missing agent was found")
	}
	a := agents["b1"]
	a.Health.Status = "StatusRecovering"
	s.ResetUsage()
	_, err = s.SaveAgent(ctx, a, versions["b1"])
	must(t, err)
	if u := s.Usage(); u.ItemsRead != 0 || u.ItemsWritten != 1 {
		t.Errorf("save over a version of LoadAgents: %s, want 1 write and no read", u)
	}
}

// The gateway leaves the acknowledgement of a push that the agent reports
// within its grace to the report's write: a newly reported hash replaces
// the delivered one, or a later rollback to the hash delivered before would
// look delivered and leave the lagging index (the gateway would never send
// it). A report of an unchanged hash leaves the acknowledgement alone.
func TestSaveAgent_NewlyReportedHashIsDelivered(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge")) // reports h0
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h0x"))
	must(t, s.AckPush(ctx, "a1", "h0x", "")) // a slow agent: acknowledged after the grace
	record := func(what string, wantAcked string, wantLagging bool) {
		t.Helper()
		r, err := s.GetAgentRecord(ctx, "a1")
		must(t, err)
		if r.Push.AckedHash != wantAcked || r.Lagging() != wantLagging {
			t.Fatalf("%s: acknowledged %q lagging %v, want %q %v", what, r.Push.AckedHash, r.Lagging(), wantAcked, wantLagging)
		}
	}
	record("acknowledged", "h0x", false)

	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1")) // a rollout
	a, _, v, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigApplying, Since: t0}
	v, err = s.SaveAgent(ctx, a, v) // the report, no acknowledgement
	must(t, err)
	record("h1 reported", "h1", false)

	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h0x")) // the rollback
	record("rolled back", "h1", true)

	a.Health.Status = "StatusRecovering" // a report of the same hash, on a version that lost a race (merge)
	_, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	record("h1 reported again", "h1", true)
	a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h0x", Status: agent.ConfigApplied, Since: t0}
	_, _, v, err = s.LoadAgent(ctx, "a1")
	must(t, err)
	_, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	record("h0x reported", "h0x", false)
}
