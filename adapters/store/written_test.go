package store

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
)

// Every write of an agent stamps what it changed, through each way the
// store writes an agent: the stream then needs no old image to tell a
// report that may move a target from a heartbeat's, a desired hash's or an
// offer's write, nor to find the fleet an agent left.
func TestAgentWrites_StampWhatTheyChanged(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	stamp := func(t *testing.T) agent.Written {
		t.Helper()
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Agents, Key: agentKey("a1"), ConsistentRead: aws.Bool(true)})
		must(t, err)
		_, w, err := DecodeAgentImage(out.Item)
		must(t, err)
		return w
	}
	want := func(t *testing.T, got, want agent.Written) {
		t.Helper()
		if got != want {
			t.Fatalf("stamp %+v, want %+v", got, want)
		}
	}
	everything := agent.Written{Stamped: true, Decisive: true, Attributes: true}
	nothing := agent.Written{Stamped: true}
	decisive := agent.Written{Stamped: true, Decisive: true}

	a := agentOf("a1", "edge")
	must(t, s.RecordAgent(ctx, a))
	want(t, stamp(t), everything) // a new agent

	a.LastSeen = t0.Add(time.Hour) // a heartbeat's lastSeen, past LastSeenEvery
	must(t, s.RecordAgent(ctx, a))
	want(t, stamp(t), nothing)

	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1"))
	want(t, stamp(t), nothing)
	must(t, s.SetPackageOffer(ctx, "a1", "0.151.0"))
	want(t, stamp(t), nothing)
	must(t, s.AckPush(ctx, "a1", "h1", ""))
	want(t, stamp(t), nothing)

	a.Health = agent.Health{Healthy: false, Status: agent.StatusStarting, ReportedAt: t0.Add(time.Hour)}
	must(t, s.RecordAgent(ctx, a))
	want(t, stamp(t), decisive)

	a.Attributes = map[string]string{"host.name": "a1", "labels.ring": "canary"}
	must(t, s.RecordAgent(ctx, a))
	want(t, stamp(t), agent.Written{Stamped: true, Decisive: true, Attributes: true})

	_, _, _, err := s.AssignAgent(ctx, "a1", 2, func(agent.Agent) assignment.Outcome { return assignment.Outcome{Fleet: "core"} })
	must(t, err)
	want(t, stamp(t), agent.Written{Stamped: true, Decisive: true, PrevFleet: "edge"})

	// The gateway's writes over the version its session holds, alone and
	// in a transaction of several agents, read nothing first.
	got, found, v, err := s.LoadAgent(ctx, "a1")
	if err != nil || !found {
		t.Fatalf("load: %v, found %v", err, found)
	}
	got.EffectiveHash = "e2" // informational: not a decisive fact
	v, err = s.SaveAgent(ctx, got, v)
	must(t, err)
	want(t, stamp(t), nothing)
	got.Online = false
	v, err = s.SaveAgent(ctx, got, v)
	must(t, err)
	want(t, stamp(t), decisive)
	must(t, s.RecordAgent(ctx, agentOf("a2", "edge")))
	got2, _, v2, err := s.LoadAgent(ctx, "a2")
	must(t, err)
	got.Online, got.LastSeen = true, t0.Add(2*time.Hour)
	got2.LastSeen = t0.Add(2 * time.Hour)
	_, errs := s.SaveAgents(ctx, []agent.Agent{got, got2}, []any{v, v2})
	for _, err := range errs {
		must(t, err)
	}
	want(t, stamp(t), decisive)

	// An updater links itself to a collector, and then to another one: the
	// write names the collector it served before.
	u1, u2 := "0b2d1c47-7a3e-4c55-9b43-1f5d0d6a8e01", "0b2d1c47-7a3e-4c55-9b43-1f5d0d6a8e02"
	a.Attributes = map[string]string{"host.name": "a1", agent.AttrLinkedCollector: u1}
	must(t, s.RecordAgent(ctx, a))
	a.Attributes = map[string]string{"host.name": "a1", agent.AttrLinkedCollector: u2}
	must(t, s.RecordAgent(ctx, a))
	want(t, stamp(t), agent.Written{Stamped: true, Decisive: true, Attributes: true, PrevCollector: u1})
}

// An item without a stamp (written by a build before the stamps) says
// nothing of what changed: the agent-event path counts it as everything.
func TestDecodeAgentImage_UnstampedItemSaysNothing(t *testing.T) {
	it, err := encodeAgent(AgentRecord{Agent: agentOf("a1", "edge")}, 1)
	must(t, err)
	delete(it, attrWritten)
	_, w, err := DecodeAgentImage(it)
	must(t, err)
	if w.Stamped {
		t.Fatalf("stamp %+v of an unstamped item, want Stamped false", w)
	}
}

// SetDesiredHashOver writes the desired hashes on the versions an
// evaluation read, reading no agent again; an agent written since the read
// loses its condition and is read again, its newer report kept; an agent
// the read does not hold is read first.
func TestSetDesiredHashOver_WritesOnTheVersionsRead(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	ids := []string{"a1", "a2", "a3"}
	for _, id := range ids {
		must(t, s.RecordAgent(ctx, agentOf(id, "edge")))
	}
	agents, read, err := s.AgentsForEvaluation(ctx, ids[:2], nil)
	must(t, err)
	s.ResetUsage()
	must(t, s.SetDesiredHashOver(ctx, ids[:2], "h1", agents, read))
	if u := s.Usage(); u.ItemsRead != 0 || u.ItemsWritten != 2 {
		t.Fatalf("usage %s, want no item read and 2 written", u)
	}

	agents, read, err = s.AgentsForEvaluation(ctx, ids[:2], nil)
	must(t, err)
	later := agents["a2"]
	later.Health = agent.Health{Healthy: false, Status: agent.StatusStarting, ReportedAt: t0.Add(time.Minute)}
	must(t, s.RecordAgent(ctx, later)) // a report after the evaluation's read
	must(t, s.SetDesiredHashOver(ctx, ids, "h2", agents, read))
	got, err := s.AgentsByID(ctx, ids)
	must(t, err)
	for _, id := range ids {
		if got[id].DesiredHash != "h2" {
			t.Errorf("agent %s desired %q, want h2", id, got[id].DesiredHash)
		}
	}
	if got["a2"].Health.Status != agent.StatusStarting {
		t.Errorf("agent a2 health %+v: the report written after the read was lost", got["a2"].Health)
	}
}
