package store

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/page"
)

// TestInventory_ScanPagesEveryAgentOnce: the unfiltered listing is a Scan
// whose pages together hold every agent once, each page sorted by id.
func TestInventory_ScanPagesEveryAgentOnce(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for i := range 25 {
		seed(t, s, agentOf(fmt.Sprintf("a%02d", i), []string{"edge", "core", ""}[i%3]))
	}
	seen := map[string]int{}
	token, pages := "", 0
	for {
		p, err := s.AgentsPage(ctx, token, 10)
		must(t, err)
		pages++
		if !sort.SliceIsSorted(p.Items, func(i, j int) bool { return p.Items[i].ID < p.Items[j].ID }) {
			t.Errorf("page %d is not sorted by id", pages)
		}
		for _, r := range p.Items {
			seen[r.ID]++
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if len(seen) != 25 || pages < 3 {
		t.Fatalf("%d agents in %d pages, want 25 in at least 3", len(seen), pages)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("agent %s listed %d times", id, n)
		}
	}
}

// TestInventory_ForeignTokensAreBadTokens: a token is good only for the
// listing that issued it; any other is page.ErrBadToken (a 400), never a
// DynamoDB error (a 500) or a start somewhere arbitrary.
func TestInventory_ForeignTokensAreBadTokens(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for i := range 3 {
		seed(t, s, agentOf(fmt.Sprintf("a%d", i), "edge"))
		a := agentOf(fmt.Sprintf("x%d", i), "")
		a.AssignmentError = "selected by fleets edge and core"
		seed(t, s, a)
	}
	scan, err := s.AgentsPage(ctx, "", 1)
	must(t, err)
	fleet, err := s.AgentsOfFleet(ctx, "edge", "", 1)
	must(t, err)
	errs, err := s.AgentsWithAssignmentError(ctx, "", 1)
	must(t, err)
	if scan.Next == "" || fleet.Next == "" || errs.Next == "" {
		t.Fatalf("tokens %q %q %q, want three", scan.Next, fleet.Next, errs.Next)
	}
	bad := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, page.ErrBadToken) {
			t.Errorf("%s: %v, want page.ErrBadToken", what, err)
		}
	}
	_, err = s.AgentsPage(ctx, fleet.Next, 10)
	bad("scan with a fleet token", err)
	_, err = s.AgentsPage(ctx, errs.Next, 10)
	bad("scan with an assignment token", err)
	_, err = s.AgentsPage(ctx, "forged", 10)
	bad("scan with a forged token", err)
	_, err = s.AgentsWithAssignmentError(ctx, scan.Next, 10)
	bad("assignment errors with a scan token", err)
	_, err = s.AgentsWithAssignmentError(ctx, fleet.Next, 10)
	bad("assignment errors with a fleet token", err)
	_, err = s.AgentsOfFleet(ctx, "core", fleet.Next, 10)
	bad("another fleet with a fleet token", err)
	_, err = s.AgentsOfFleet(ctx, "edge", scan.Next, 10)
	bad("a fleet with a scan token", err)
}

// TestInventory_AssignmentErrors lists exactly the agents with an error,
// from the sparse index, in id order.
func TestInventory_AssignmentErrors(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("ok-1", "edge"))
	seed(t, s, agentOf("none", ""))
	for _, id := range []string{"x3", "x1", "x2"} {
		a := agentOf(id, "")
		a.AssignmentError = "selected by fleets edge and core"
		seed(t, s, a)
	}
	var got []string
	token := ""
	for {
		p, err := s.AgentsWithAssignmentError(ctx, token, 2)
		must(t, err)
		for _, r := range p.Items {
			if r.AssignmentError == "" {
				t.Errorf("%s is listed without an error", r.ID)
			}
			got = append(got, r.ID)
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if fmt.Sprint(got) != "[x1 x2 x3]" {
		t.Fatalf("agents with an assignment error: %v, want [x1 x2 x3]", got)
	}
}

// TestInventory_AgentsByName finds agents by the name people know them by:
// host.name, else service.instance.id, else the id; shared names give
// every agent; a rename leaves the old name.
func TestInventory_AgentsByName(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	named := func(id string, attrs map[string]string) agent.Agent {
		a := agentOf(id, "edge")
		a.Attributes = attrs
		return a
	}
	seed(t, s, named("0001", map[string]string{"host.name": "web-1"}))
	seed(t, s, named("0002", map[string]string{"host.name": "localhost"}))
	seed(t, s, named("0003", map[string]string{"host.name": "localhost"}))
	seed(t, s, named("0004", map[string]string{"service.instance.id": "collector-a"}))
	seed(t, s, named("0005", nil))
	renamed := named("0006", map[string]string{"host.name": "old-name"})
	seed(t, s, renamed)
	renamed.Attributes = map[string]string{"host.name": "new-name"}
	must(t, s.RecordAgent(ctx, renamed))

	cases := []struct {
		name  string
		limit int
		want  string
	}{
		{name: "web-1", limit: 0, want: "[0001]"},          // host.name
		{name: "localhost", limit: 0, want: "[0002 0003]"}, // shared: both, by id
		{name: "localhost", limit: 1, want: "[0002]"},      // at most limit
		{name: "collector-a", limit: 0, want: "[0004]"},    // service.instance.id without host.name
		{name: "0005", limit: 0, want: "[0005]"},           // neither: the id is the name
		{name: "new-name", limit: 0, want: "[0006]"},       // renamed
		{name: "old-name", limit: 0, want: "[]"},           // the old name is gone
		{name: "nobody", limit: 0, want: "[]"},             // unknown
		{name: "0001", limit: 0, want: "[]"},               // an id is no name when the agent has one
	}
	for _, c := range cases {
		as, err := s.AgentsByName(ctx, c.name, c.limit)
		must(t, err)
		ids := []string{}
		for _, a := range as {
			ids = append(ids, a.ID)
		}
		if fmt.Sprint(ids) != c.want {
			t.Errorf("AgentsByName(%q, %d) = %v, want %s", c.name, c.limit, ids, c.want)
		}
	}
}

// TestInventory_ComponentSummaryWritesOnlyChanges: the health's component
// summary is part of the stored agent; the same summary again writes
// nothing, a changed one writes once.
func TestInventory_ComponentSummaryWritesOnlyChanges(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	a := agentOf("a1", "edge")
	a.Health.Components = &agent.ComponentSummary{Total: 3, UnhealthyCount: 1, Unhealthy: []string{"pipeline:traces/exporter:otlp"}}
	seed(t, s, a)
	s.ResetUsage()
	same := a
	same.Health.Components = &agent.ComponentSummary{Total: 3, UnhealthyCount: 1, Unhealthy: []string{"pipeline:traces/exporter:otlp"}}
	must(t, s.RecordAgent(ctx, same))
	if u := s.Usage(); u.ItemsWritten != 0 {
		t.Errorf("the same summary wrote %d items", u.ItemsWritten)
	}
	healed := a
	healed.Health.Components = &agent.ComponentSummary{Total: 3}
	must(t, s.RecordAgent(ctx, healed))
	if u := s.Usage(); u.ItemsWritten != 1 {
		t.Errorf("a changed summary wrote %d items, want 1", u.ItemsWritten)
	}
	got, _, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if c := got.Health.Components; c == nil || c.Total != 3 || c.UnhealthyCount != 0 || len(c.Unhealthy) != 0 {
		t.Errorf("stored components %+v", c)
	}
}
