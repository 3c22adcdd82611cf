package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
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
		{"first report", func(a *agent.Agent) {}, true},
		{"same report", func(a *agent.Agent) {}, false},
		{"heartbeat 10s later", func(a *agent.Agent) { a.LastSeen = t0.Add(10 * time.Second) }, false},
		{"heartbeat 29s later", func(a *agent.Agent) { a.LastSeen = t0.Add(29 * time.Second) }, false},
		{"heartbeat 30s later", func(a *agent.Agent) { a.LastSeen = t0.Add(30 * time.Second) }, true}, // coalesced lastSeen is due
		{"heartbeat 40s later", func(a *agent.Agent) { a.LastSeen = t0.Add(40 * time.Second) }, false},
		{"older report", func(a *agent.Agent) { a.LastSeen = t0 }, false},                                                             // never moves lastSeen back
		{"same instant in another zone", func(a *agent.Agent) { a.ConnectedAt = a.ConnectedAt.In(time.FixedZone("X", 3600)) }, false}, // stored in UTC
		{"health changed", func(a *agent.Agent) { a.Health.Healthy, a.Health.LastError = false, "boom" }, true},
		{"config status changed", func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigApplying }, true},
		{"attribute added", func(a *agent.Agent) { a.Attributes = map[string]string{"host.name": "a1", "site": "x"} }, true},
		{"went offline", func(a *agent.Agent) { a.Online = false }, true},
		{"desired hash in the report is ignored", func(a *agent.Agent) { a.DesiredHash = "h-gateway" }, false}, // the planner owns it
	}
	cur := base
	for _, tt := range tests {
		tt.edit(&cur)
		s.ResetUsage()
		wrote, err := s.RecordAgent(ctx, cur)
		must(t, err)
		if u := s.Usage(); wrote != tt.write || u.ItemsWritten != int64(b2i(tt.write)) {
			t.Errorf("%s: wrote %v (%d items), want %v", tt.name, wrote, u.ItemsWritten, tt.write)
		}
	}
	got, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if got.LastSeen != t0.Add(30*time.Second) || got.Online || got.Health.LastError != "boom" || got.DesiredHash != "" || got.Attributes["site"] != "x" {
		t.Fatalf("stored agent %+v", got.Agent)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RecordAgent keeps what the planner and the executors own.
func TestRecordAgent_KeepsDesiredStateAndCountsOneReadPerReport(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	a := agentOf("a1", "edge")
	_, err := s.RecordAgent(ctx, a)
	must(t, err)
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, "h1"))
	must(t, s.SetAgentTargetVersions(ctx, map[string]string{"a1": "0.162.0"}))
	must(t, s.SetPackageOffer(ctx, "a1", "0.162.0"))
	a.Health.Status = "StatusRecovering"
	s.ResetUsage()
	wrote, err := s.RecordAgent(ctx, a)
	must(t, err)
	u := s.Usage()
	got, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if !wrote || got.DesiredHash != "h1" || got.TargetVersion != "0.162.0" || got.PackageOffer != "0.162.0" || got.Health.Status != "StatusRecovering" {
		t.Fatalf("agent after a report %+v", got.Agent)
	}
	if u.ItemsRead != 1 || u.ItemsWritten != 1 {
		t.Fatalf("usage of one changed report: %s, want 1 read and 1 write", u)
	}
}

func TestAgents_ByIDAndOfFleetPaged(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for i := 0; i < 250; i++ {
		_, err := s.RecordAgent(ctx, agentOf(fmt.Sprintf("a%03d", i), "edge"))
		must(t, err)
	}
	_, err := s.RecordAgent(ctx, agentOf("z-other", "core"))
	must(t, err)
	_, err = s.RecordAgent(ctx, agentOf("z-none", ""))
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
	if r, err := s.GetAgent(ctx, "missing"); err != nil || r != nil {
		t.Fatalf("missing agent: %v %v", r, err)
	}
}

// The lagging index holds exactly the agents the gateway has something to
// push to.
func TestAgents_Lagging(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for _, id := range []string{"a1", "a2", "a3"} {
		_, err := s.RecordAgent(ctx, agentOf(id, "edge"))
		must(t, err)
	}
	lagging := func() string {
		t.Helper()
		p, err := s.LaggingAgents(ctx, "edge", "", 0)
		must(t, err)
		out := ""
		for _, r := range p.Items {
			out += r.ID + " "
		}
		return out
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"nothing desired", func() error { return nil }, ""},
		{"desired hash set", func() error { return s.SetDesiredHash(ctx, []string{"a1", "a2"}, "h1") }, "a1 a2 "},
		{"a1 delivered", func() error { return s.AckPush(ctx, "a1", "h1", "") }, "a2 "},
		{"a2 already runs it", func() error { // reported by the agent itself: nothing to push
			a := agentOf("a2", "edge")
			a.RemoteConfig.Hash = "h1"
			_, err := s.RecordAgent(ctx, a)
			return err
		}, ""},
		{"package offer", func() error { return s.SetPackageOffer(ctx, "a3", "0.162.0") }, "a3 "},
		{"offer delivered", func() error { return s.AckPush(ctx, "a3", "", "0.162.0") }, ""},
		{"new desired hash", func() error { return s.SetDesiredHash(ctx, []string{"a1"}, "h2") }, "a1 "},
		{"offer withdrawn and renewed", func() error {
			if err := s.SetPackageOffer(ctx, "a3", ""); err != nil {
				return err
			}
			return s.SetPackageOffer(ctx, "a3", "0.163.0")
		}, "a1 a3 "},
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

// SetDesiredHash writes only the agents whose hash changes.
func TestAgents_SetDesiredHashWritesOnlyChanges(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var ids []string
	for i := 0; i < 120; i++ {
		id := fmt.Sprintf("a%03d", i)
		ids = append(ids, id)
		_, err := s.RecordAgent(ctx, agentOf(id, "edge"))
		must(t, err)
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
