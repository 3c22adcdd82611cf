package store

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// An updater is found by the collector it names, with its reports read as
// stored; a collector without one is absent; an updater that moved to
// another collector no longer serves the first; of two that name one
// collector, the online one serves it.
func TestLinkedUpdaters(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	const c1, c2, c3 = "018f3a10-2233-7444-8555-000000000001", "018f3a10-2233-7444-8555-000000000002", "018f3a10-2233-7444-8555-000000000003"
	updater := func(id, collector string, online bool) agent.Agent {
		a := agentOf(id, "")
		a.Attributes = map[string]string{agent.AttrLinkedCollector: collector, "service.name": "myriarch-updater"}
		a.Online, a.ConnectedAt = online, time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
		return a
	}
	u1 := updater("u1", c1, true)
	u1.Update = &agent.UpdateComponent{Status: "downloading", Version: "v0.150.0"}
	seed(t, s, u1)
	moved := updater("u2", c2, true)
	seed(t, s, moved)
	moved.Attributes[agent.AttrLinkedCollector] = c3
	must(t, s.RecordAgent(ctx, moved))
	seed(t, s, updater("u3", c1, false)) // left behind by a reinstall
	seed(t, s, agentOf(c1, "edge"))

	got, err := s.LinkedUpdaters(ctx, []string{c1, c2, c3, "018f3a10-2233-7444-8555-000000000009"})
	must(t, err)
	if u := got[c1]; u.ID != "u1" || u.Update == nil || u.Update.Status != "downloading" {
		t.Errorf("collector 1: %+v, want u1 with its reports", u)
	}
	if _, ok := got[c2]; ok {
		t.Errorf("collector 2 is served by an updater that moved to collector 3: %+v", got[c2])
	}
	if got[c3].ID != "u2" {
		t.Errorf("collector 3: %q, want u2", got[c3].ID)
	}
	if len(got) != 2 {
		t.Errorf("%d collectors served, want 2: %v", len(got), got)
	}
}
