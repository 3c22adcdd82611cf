package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/page"
)

// leaseTable is the gateways table as a reader sees it.
type leaseTable struct {
	mu     sync.Mutex
	leases agent.Leases
}

func (l *leaseTable) Leases(context.Context) (agent.Leases, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := agent.Leases{}
	for k, v := range l.leases {
		out[k] = v
	}
	return out, nil
}

// TestLeases_DeadTaskTakesItsAgentsOffline: the agents of a gateway task
// that died (its records still say online, its lease is no longer renewed)
// are offline in the fleet counts, the inventory and its online filter
// once the lease runs out, although their lastSeen says nothing new; while
// the lease lives they show as seen now.
func TestLeases_DeadTaskTakesItsAgentsOffline(t *testing.T) {
	leases := &leaseTable{leases: agent.Leases{"task-1": {Until: t0.Add(90 * time.Second)}}}
	live := liveness
	live.Source = leases
	h := newHarness(t, withLiveness(live))
	h.applyFixture()
	h.store.Lock()
	for id, a := range h.store.Agents {
		a.Online, a.Task, a.LastSeen = true, "task-1", t0.Add(-time.Hour) // connected an hour ago, idle since
		h.store.Agents[id] = a
	}
	h.store.Unlock()

	online := func() (fleetOnline, listed int, e1 schema.AgentDetail) {
		f := decode[schema.Fleet](t, h.do(get("/api/v1/fleets/edge", RoleViewer)))
		l := decode[page.Page[schema.Agent]](t, h.do(get("/api/v1/agents?fleet=edge&online=true", RoleViewer)))
		return f.Agents.Online, len(l.Items), decode[schema.AgentDetail](t, h.do(get("/api/v1/agents/e1", RoleViewer)))
	}
	h.advance(90 * time.Second)
	if f, l, e1 := online(); f != 4 || l != 4 || !e1.Online || e1.LastSeen == nil || !e1.LastSeen.Equal(h.clock()) {
		t.Fatalf("lease alive: %d online in the fleet, %d listed, e1 online %v last seen %v; want 4, 4, online now", f, l, e1.Online, e1.LastSeen)
	}
	h.advance(time.Millisecond) // the lease ran out: the task died at t0
	if f, l, e1 := online(); f != 0 || l != 0 || e1.Online || e1.LastSeen == nil || !e1.LastSeen.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("lease dead: %d online in the fleet, %d listed, e1 online %v last seen %v; want none, last seen as stored", f, l, e1.Online, e1.LastSeen)
	}
	// Another task holds e1 now.
	leases.mu.Lock()
	leases.leases["task-2"] = agent.Lease{Until: h.clock().Add(time.Minute)}
	leases.mu.Unlock()
	h.store.Lock()
	a := h.store.Agents["e1"]
	a.Task = "task-2"
	h.store.Agents["e1"] = a
	h.store.Unlock()
	if f, _, e1 := online(); f != 1 || !e1.Online {
		t.Fatalf("e1 on a live task: %d online, e1 online %v", f, e1.Online)
	}
}
