package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/page"
)

// RecordAgent writes an agent only when something other than lastSeen
// changed, or when lastSeen moved by LastSeenEvery (30 s) or more.
func TestRecordAgent_WritesOnlyChanges(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	base := agentOf("a1", "edge")
	tests := []struct {
		name  string
		edit  func(a *agent.Agent)
		write bool
	}{
		{name: "first report", edit: func(a *agent.Agent) {}, write: true}, // creates the agent as reported, fleet edge included
		{name: "same report", edit: func(a *agent.Agent) {}, write: false},
		{name: "heartbeat 10s later", edit: func(a *agent.Agent) { a.LastSeen = t0.Add(10 * time.Second) }, write: false},
		{name: "heartbeat 29s later", edit: func(a *agent.Agent) { a.LastSeen = t0.Add(29 * time.Second) }, write: false},
		{name: "heartbeat 30s later", edit: func(a *agent.Agent) { a.LastSeen = t0.Add(30 * time.Second) }, write: true}, // coalesced lastSeen is due
		{name: "heartbeat 40s later", edit: func(a *agent.Agent) { a.LastSeen = t0.Add(40 * time.Second) }, write: false},
		{name: "older report", edit: func(a *agent.Agent) { a.LastSeen = t0 }, write: false},                                                             // never moves lastSeen back
		{name: "same instant in another zone", edit: func(a *agent.Agent) { a.ConnectedAt = a.ConnectedAt.In(time.FixedZone("X", 3600)) }, write: false}, // stored in UTC
		{name: "health changed", edit: func(a *agent.Agent) { a.Health.Healthy, a.Health.LastError = false, "boom" }, write: true},
		{name: "config status changed", edit: func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigApplying }, write: true},
		{name: "effective config reported", edit: func(a *agent.Agent) { a.EffectiveHash = "e1" }, write: true},
		{name: "same effective config", edit: func(a *agent.Agent) { a.EffectiveHash = "e1" }, write: false}, // unchanged: no change
		{name: "attribute added", edit: func(a *agent.Agent) { a.Attributes = map[string]string{"host.name": "a1", "site": "x"} }, write: true},
		{name: "went offline", edit: func(a *agent.Agent) { a.Online = false }, write: true},
		{name: "desired hash in the report is ignored", edit: func(a *agent.Agent) { a.DesiredHash = "h-gateway" }, write: false}, // the planner owns it
		{name: "fleet in the report is ignored", edit: func(a *agent.Agent) { a.Fleet = "core" }, write: false},                   // assigned on apply
	}
	cur := base
	for _, tt := range tests {
		tt.edit(&cur)
		s.ResetUsage()
		must(t, s.RecordAgent(ctx, cur))
		if u := s.Usage(); u.ItemsWritten != int64(b2i(tt.write)) {
			t.Errorf("%s: %d items written, want write %v", tt.name, u.ItemsWritten, tt.write)
		}
	}
	got, found, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if !found || got.Fleet != "edge" || got.LastSeen != t0.Add(30*time.Second) || got.Online || got.Health.LastError != "boom" || got.DesiredHash != "" || got.Attributes["site"] != "x" || got.EffectiveHash != "e1" {
		t.Fatalf("stored agent %+v", got)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RecordAgent keeps what the planner, the executors and the revision own.
func TestRecordAgent_KeepsDesiredStateAndCountsOneReadPerReport(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	a := agentOf("a1", "edge")
	seed(t, s, a)
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1"))
	must(t, s.SetAgentTargetVersions(ctx, map[string]string{"a1": "0.162.0"}))
	must(t, s.SetPackageOffer(ctx, "a1", "0.162.0"))
	a.Health.Status = "StatusRecovering"
	a.Fleet = ""
	s.ResetUsage()
	must(t, s.RecordAgent(ctx, a))
	u := s.Usage()
	got, _, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if got.Fleet != "edge" || got.DesiredHash != "h1" || got.TargetVersion != "0.162.0" || got.PackageOffer != "0.162.0" || got.Health.Status != "StatusRecovering" {
		t.Fatalf("agent after a report %+v", got)
	}
	if u.ItemsRead != 1 || u.ItemsWritten != 1 {
		t.Fatalf("usage of one changed report: %s, want 1 read and 1 write", u)
	}
}

func TestAgents_ByIDAndOfFleetPaged(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for i := 0; i < 250; i++ {
		seed(t, s, agentOf(fmt.Sprintf("a%03d", i), "edge"))
	}
	seed(t, s, agentOf("z-other", "core"))
	seed(t, s, agentOf("z-none", ""))
	seed(t, s, agentOf("z-moved", "edge"))
	_, _, _, err := s.AssignAgent(ctx, "z-moved", 1, func(agent.Agent) assignment.Outcome { return assignment.Outcome{Fleet: "core"} })
	must(t, err)

	var ids []string
	token, pages := "", 0
	for {
		p, err := s.AgentsOfFleet(ctx, "edge", token, 100)
		must(t, err)
		pages++
		for _, r := range p.Items {
			ids = append(ids, r.ID)
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if len(ids) != 250 || pages != 3 || ids[0] != "a000" || ids[249] != "a249" {
		t.Fatalf("%d agents of edge in %d pages (%v...)", len(ids), pages, ids[:3])
	}
	all, err := s.FleetAgents(ctx, "edge")
	must(t, err)
	if len(all) != 250 {
		t.Fatalf("FleetAgents: %d, want 250", len(all))
	}
	byID, err := s.AgentsByID(ctx, []string{"a001", "z-none", "missing", "a001"})
	must(t, err)
	if len(byID) != 2 || byID["a001"].Fleet != "edge" || byID["z-none"].Fleet != "" {
		t.Fatalf("AgentsByID = %v", byID)
	}
	if _, found, err := s.GetAgent(ctx, "missing"); err != nil || found {
		t.Fatalf("missing agent: %v %v", found, err)
	}
	everyone, err := s.AllAgents(ctx)
	must(t, err)
	if len(everyone) != 253 || everyone[0].ID != "a000" || everyone[252].ID != "z-other" {
		t.Fatalf("AllAgents: %d agents, first %s", len(everyone), everyone[0].ID)
	}
	if _, _, changed, err := s.AssignAgent(ctx, "missing", 1, func(agent.Agent) assignment.Outcome { return assignment.Outcome{Fleet: "edge"} }); err != nil || changed {
		t.Fatalf("assigning a missing agent changed %v (%v): it must stay missing", changed, err)
	}
}

// The lagging index holds exactly the agents the gateway has something to
// push to.
func TestAgents_Lagging(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for _, id := range []string{"a1", "a2", "a3"} {
		seed(t, s, agentOf(id, "edge"))
	}
	lagging := func() string {
		t.Helper()
		var ids []string
		token := ""
		for {
			page, _, next, err := s.LaggingAgents(ctx, token, 0)
			must(t, err)
			for _, a := range page {
				ids = append(ids, a.ID)
			}
			if token = next; token == "" {
				break
			}
		}
		sort.Strings(ids)
		return strings.Join(ids, " ")
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{name: "nothing desired", do: func() error { return nil }, want: ""},
		{name: "desired hash set", do: func() error { return s.SetDesiredHash(ctx, []string{"a1", "a2"}, "h1") }, want: "a1 a2"},
		{name: "a1 delivered", do: func() error { return s.AckPush(ctx, "a1", "h1", "") }, want: "a2"},
		{name: "a2 already runs it", do: func() error { // reported by the agent itself: nothing to push
			a := agentOf("a2", "edge")
			a.RemoteConfig.Hash = "h1"
			return s.RecordAgent(ctx, a)
		}, want: ""},
		{name: "package offer", do: func() error { return s.SetPackageOffer(ctx, "a3", "0.162.0") }, want: "a3"},
		{name: "offer delivered", do: func() error { return s.AckPush(ctx, "a3", "", "0.162.0") }, want: ""},
		{name: "retry of the offer (attempt 2)", do: func() error { return s.SetPackageOffer(ctx, "a3", "0.162.0#2") }, want: "a3"},
		{name: "retry delivered", do: func() error { return s.AckPush(ctx, "a3", "", "0.162.0#2") }, want: ""},
		{name: "an agent already on a retried version", do: func() error { return s.SetPackageOffer(ctx, "a2", "0.150.0#3") }, want: ""}, // agentOf runs 0.150.0
		{name: "new desired hash", do: func() error { return s.SetDesiredHash(ctx, []string{"a1"}, "h2") }, want: "a1"},
		{name: "offer withdrawn and renewed", do: func() error {
			if err := s.SetPackageOffer(ctx, "a3", ""); err != nil {
				return err
			}
			return s.SetPackageOffer(ctx, "a3", "0.163.0")
		}, want: "a1 a3"},
		{name: "an agent already on the offered version", do: func() error { return s.SetPackageOffer(ctx, "a2", "v0.150.0") }, want: "a1 a3"}, // agentOf runs 0.150.0
	}
	for _, st := range steps {
		must(t, st.do())
		if got := lagging(); got != st.want {
			t.Fatalf("%s: lagging %q, want %q", st.name, got, st.want)
		}
	}
	if err := s.SetPackageOffer(ctx, "missing", "0.1.0"); err == nil {
		t.Fatal("an offer to a missing agent must fail")
	}
}

// The gateway polls the lagging index every second, mostly to learn that
// nothing lags: that answer is one request, whatever the number of shards.
func TestAgents_EmptyLaggingIndexIsOneRequest(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for _, id := range []string{"a1", "a2", "a3"} {
		seed(t, s, agentOf(id, "edge"))
	}
	s.ResetUsage()
	page, _, next, err := s.LaggingAgents(ctx, "", 500)
	must(t, err)
	if len(page) != 0 || next != "" {
		t.Fatalf("%d lagging agents, next %q: none lag", len(page), next)
	}
	if u := s.Usage(); u.Requests != 1 {
		t.Fatalf("usage %s, want 1 request", u)
	}
}

// A lagging page lists each agent's version, ordered as its writes: the
// listed version of a desired hash set after a read is after the read's,
// and a read's is not after the listed one (the gateway takes a listed
// desired state without a read only when it is after what it holds).
func TestAgents_LaggingPageListsOrderedVersions(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge"))
	_, _, before, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1"))
	page, versions, _, err := s.LaggingAgents(ctx, "", 10)
	must(t, err)
	if len(page) != 1 || len(versions) != 1 || page[0].DesiredHash != "h1" {
		t.Fatalf("page %v versions %v, want a1 lagging with h1", page, versions)
	}
	listed, ok := versions[0].(*ListedVersion)
	if !ok {
		t.Fatalf("listed version %T, want *ListedVersion", versions[0])
	}
	_, _, now, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	switch {
	case !listed.After(before):
		t.Error("the listed version is not after the version read before the desired hash was set")
	case listed.After(now), now.(*AgentVersion).After(listed):
		t.Error("the listed version and a read of the same state are ordered")
	case listed.After(nil), listed.After("1"), listed.After((*AgentVersion)(nil)), now.(*AgentVersion).After((*ListedVersion)(nil)):
		t.Error("a version is after nil, a nil version or a foreign value")
	}
}

// SetDesiredHash writes only the agents whose hash changes.
func TestAgents_SetDesiredHashWritesOnlyChanges(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var ids []string
	for i := 0; i < 120; i++ {
		id := fmt.Sprintf("a%03d", i)
		ids = append(ids, id)
		seed(t, s, agentOf(id, "edge"))
	}
	must(t, s.SetDesiredHash(ctx, ids[:20], "h1"))
	s.ResetUsage()
	must(t, s.SetDesiredHash(ctx, append(ids, "missing"), "h1"))
	if u := s.Usage(); u.ItemsWritten != 100 || u.ItemsRead != 120 {
		t.Fatalf("usage %s, want 120 read and 100 written", u)
	}
	byID, err := s.AgentsByID(ctx, ids)
	must(t, err)
	for _, id := range ids {
		if byID[id].DesiredHash != "h1" {
			t.Fatalf("agent %s desired %q", id, byID[id].DesiredHash)
		}
	}
}

// The lagging index spreads over its shards, and its listing pages through
// all of them.
func TestAgents_LaggingPagesOverShards(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var ids []string
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("a%02d", i)
		ids = append(ids, id)
		seed(t, s, agentOf(id, "edge"))
	}
	must(t, s.SetDesiredHash(ctx, ids, "h1"))
	seen, shards, token := map[string]bool{}, map[string]bool{}, ""
	for pages := 0; ; pages++ {
		page, _, next, err := s.LaggingAgents(ctx, token, 7)
		must(t, err)
		if len(page) > 7 || pages > 20 {
			t.Fatalf("page of %d agents, page %d", len(page), pages)
		}
		for _, a := range page {
			if seen[a.ID] {
				t.Fatalf("agent %s listed twice", a.ID)
			}
			seen[a.ID], shards[lagShard(a.ID)] = true, true
		}
		if token = next; token == "" {
			break
		}
	}
	if len(seen) != 60 || len(shards) < 4 {
		t.Fatalf("%d lagging agents over %d shards, want 60 over several", len(seen), len(shards))
	}
	if _, _, _, err := s.LaggingAgents(ctx, "bad", 10); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("bad token: %v", err)
	}
}

// MarkOffline writes offline unless a newer connection owns the agent.
func TestAgents_MarkOffline(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	a := agentOf("a1", "edge") // connected at t0-1h
	seed(t, s, a)
	steps := []struct {
		name        string
		connectedAt time.Time
		at          time.Time
		online      bool
		lastSeen    time.Time
	}{
		{name: "an older connection closes", connectedAt: t0.Add(-2 * time.Hour), at: t0.Add(time.Minute), online: true, lastSeen: t0}, // a newer connection owns it
		{name: "its connection closes", connectedAt: t0.Add(-time.Hour), at: t0.Add(time.Minute), online: false, lastSeen: t0.Add(time.Minute)},
		{name: "closes again", connectedAt: t0.Add(-time.Hour), at: t0.Add(2 * time.Minute), online: false, lastSeen: t0.Add(time.Minute)}, // offline already: no write
	}
	for _, st := range steps {
		must(t, s.MarkOffline(ctx, "a1", st.connectedAt, st.at))
		got, _, err := s.GetAgent(ctx, "a1")
		must(t, err)
		if got.Online != st.online || !got.LastSeen.Equal(st.lastSeen) {
			t.Fatalf("%s: online %v lastSeen %v, want %v %v", st.name, got.Online, got.LastSeen, st.online, st.lastSeen)
		}
	}
	must(t, s.MarkOffline(ctx, "missing", t0, t0)) // nothing to mark
}

// Concurrent writers of one agent (gateway reports, planner, executor) lose
// nothing: each write is conditional and a lost race reads again.
func TestAgents_ConcurrentWritersLoseNothing(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge"))
	writes := []func() error{
		func() error { return s.SetDesiredHash(ctx, []string{"a1"}, "h1") },
		func() error { return s.SetAgentTargetVersions(ctx, map[string]string{"a1": "0.162.0"}) },
		func() error { return s.SetPackageOffer(ctx, "a1", "0.162.0") },
		func() error { return s.AckPush(ctx, "a1", "h0", "") },
	}
	for i := 0; i < 4; i++ {
		writes = append(writes, func() error {
			a := agentOf("a1", "edge")
			a.Attributes = map[string]string{"host.name": "a1", fmt.Sprintf("report.%d", i): "x"}
			return s.RecordAgent(ctx, a)
		})
	}
	errs := make(chan error, len(writes))
	start := make(chan struct{})
	for _, w := range writes {
		go func() { <-start; errs <- w() }()
	}
	close(start)
	for range writes {
		must(t, <-errs)
	}
	got, err := s.GetAgentRecord(ctx, "a1")
	must(t, err)
	if got.DesiredHash != "h1" || got.TargetVersion != "0.162.0" || got.PackageOffer != "0.162.0" || got.Push.AckedHash != "h0" || got.Fleet != "edge" {
		t.Fatalf("agent after concurrent writes %+v push %+v", got.Agent, got.Push)
	}
}

// Ping succeeds on deployed tables and fails, naming the table, where there
// are none (a wrong prefix); it creates nothing.
func TestPing(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if as, err := s.AllAgents(ctx); err != nil || len(as) != 0 {
		t.Fatalf("agents after a ping: %v, %v; want none", as, err)
	}
	missing := New(dynamo(t), TablesWithPrefix("no-such-prefix-"))
	if err := missing.Ping(ctx); err == nil || !strings.Contains(err.Error(), "no-such-prefix-agents") {
		t.Fatalf("ping without tables: %v, want an error naming the table", err)
	}
}

// A write of many agents goes in transactions of 100; when one agent of a
// chunk changed after the batch read (here: a report written from inside
// the first call of change, between the read and the write), the chunk
// stores nothing and is written again agent by agent, so that both the
// report and the change are kept, and the other chunks are stored as well.
func TestAgents_UpdateAgentsChunkLosesARace(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var ids []string
	for i := 0; i < 250; i++ {
		id := fmt.Sprintf("a%03d", i)
		ids = append(ids, id)
		seed(t, s, agentOf(id, "edge"))
	}
	raced := false
	s.ResetUsage()
	must(t, s.updateAgents(ctx, ids, func(r *AgentRecord) bool {
		if r.ID == "a117" && !raced {
			raced = true
			a := agentOf("a117", "edge")
			a.Attributes = map[string]string{"host.name": "a117", "report": "late"}
			must(t, s.RecordAgent(ctx, a))
		}
		r.DesiredHash = "h1"
		return true
	}))
	if !raced {
		t.Fatal("the race was not staged")
	}
	byID, err := s.AgentsByID(ctx, ids)
	must(t, err)
	for _, id := range ids {
		if byID[id].DesiredHash != "h1" {
			t.Fatalf("agent %s desired %q, want h1", id, byID[id].DesiredHash)
		}
	}
	if got := byID["a117"].Attributes["report"]; got != "late" {
		t.Fatalf("the report written during the update was lost: attributes %v", byID["a117"].Attributes)
	}
	// Two transactions stored 150, the chunk of a117 (which stored nothing)
	// 100 one by one, and the report: 251 written.
	if u := s.Usage(); u.ItemsWritten != 251 {
		t.Fatalf("usage %s, want 251 items written", u)
	}
}

// Agents with many attributes are large: 30 of about 200 KB each are more
// than DynamoDB takes in one transaction (4 MB), so a wave's desired hashes
// are written in chunks by size as well as by count, and all are stored.
func TestAgents_SetDesiredHash_LargeAgents(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var ids []string
	for i := 0; i < 30; i++ {
		a := agentOf(fmt.Sprintf("big%02d", i), "edge")
		for k := 0; k < 200; k++ {
			a.Attributes[fmt.Sprintf("labels.k%03d", k)] = strings.Repeat("v", 1000)
		}
		seed(t, s, a)
		ids = append(ids, a.ID)
	}
	must(t, s.SetDesiredHash(ctx, ids, "h-big"))
	byID, err := s.AgentsByID(ctx, ids)
	must(t, err)
	for _, id := range ids {
		if byID[id].DesiredHash != "h-big" {
			t.Fatalf("agent %s desired %q, want h-big", id, byID[id].DesiredHash)
		}
	}
}
