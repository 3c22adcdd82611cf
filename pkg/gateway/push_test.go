package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// TestPushPage_ReadsTheChangedAgentsOfAPageInOneBatch: a wave puts hundreds
// of held agents on one page of the lagging index; those whose desired state
// looks changed are read again together, not one by one, and take the
// stored desired state (not the page's, which may be stale).
func TestPushPage_ReadsTheChangedAgentsOfAPageInOneBatch(t *testing.T) {
	agents := newMemAgents()
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}}, agents, nil)
	must(t, err)
	ids := []string{"00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"}
	var page []agent.Agent
	for _, id := range ids {
		agents.setDesired(id, "h-stored", "")
		g.sessions.put(&session{id: id, view: agent.Agent{ID: id}}) // plain HTTP: nothing is sent from the poll
		page = append(page, agent.Agent{ID: id, DesiredHash: "h-page"})
	}
	page = append(page, agent.Agent{ID: "00000000-0000-0000-0000-000000000009", DesiredHash: "h-page"}) // held by another task

	g.pushPage(context.Background(), page)

	if agents.batchReads != 1 {
		t.Errorf("%d batch reads, want 1", agents.batchReads)
	}
	for _, id := range ids {
		if got := g.sessions.get(id).view.DesiredHash; got != "h-stored" {
			t.Errorf("agent %s: desired hash %q, want the stored h-stored", id, got)
		}
	}
}
