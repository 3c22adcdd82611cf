package store

import (
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/selector"
)

// A new agent and one whose attributes changed wait in the sparse
// assignment index until they are assigned; heartbeats and health reports
// do not put them there; an assignment of an older revision does not
// overwrite a newer one.
func TestAssignment_PendingIndexAndRevisionOrder(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	edge := fleet.Fleet{Name: "edge", Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": "edge"}}, Config: fleet.Config{Hash: "h-edge"}}
	lab := fleet.Fleet{Name: "lab", Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": "lab"}}, Config: fleet.Config{Hash: "h-lab"}}
	decideAmong := func(fs ...fleet.Fleet) func(agent.Agent) assignment.Outcome {
		return func(a agent.Agent) assignment.Outcome { return assignment.Decide(fs, a) }
	}
	a := agent.Agent{ID: "a1", Online: true, LastSeen: t0, Attributes: map[string]string{"labels.fleet": "edge", "host.name": "gw-1"}}
	must(t, s.RecordAgent(ctx, a))
	pending := func() []string {
		ids, err := s.PendingAssignments(ctx)
		must(t, err)
		return ids
	}
	if got := pending(); len(got) != 1 || got[0] != "a1" {
		t.Fatalf("pending %v, want the new agent a1", got)
	}
	before, after, changed, err := s.AssignAgent(ctx, "a1", 2, decideAmong(edge, lab))
	must(t, err)
	if !changed || before.Fleet != "" || after.Fleet != "edge" || after.DesiredHash != "h-edge" {
		t.Fatalf("assigned %+v -> %+v (changed %v), want fleet edge, bootstrapped with h-edge", before, after, changed)
	}
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending %v after the assignment, want none", got)
	}
	a.Health = agent.Health{Healthy: true, ReportedAt: t0}
	must(t, s.RecordAgent(ctx, a)) // a health report: no reassignment
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending %v after a health report, want none", got)
	}
	a.Attributes = map[string]string{"labels.fleet": "lab", "host.name": "gw-1"}
	must(t, s.RecordAgent(ctx, a))
	if got := pending(); len(got) != 1 {
		t.Fatalf("pending %v after the attributes changed, want a1", got)
	}
	// An assignment computed against revision 1 loses against the one of 2.
	if _, _, changed, err := s.AssignAgent(ctx, "a1", 1, decideAmong(lab)); err != nil || changed {
		t.Fatalf("an older revision's assignment changed the agent (%v, %v)", changed, err)
	}
	_, after, _, err = s.AssignAgent(ctx, "a1", 2, decideAmong(edge, lab))
	must(t, err)
	if after.Fleet != "lab" || after.DesiredHash != "h-edge" {
		t.Fatalf("moved agent %+v, want fleet lab keeping its desired hash (the planner rolls lab's out)", after)
	}
	// Two equally specific fleets: an error, and no fleet.
	twin := lab
	twin.Name = "lab-twin"
	_, after, _, err = s.AssignAgent(ctx, "a1", 3, decideAmong(lab, twin))
	must(t, err)
	if after.Fleet != "" || after.AssignmentError == "" {
		t.Fatalf("agent %+v, want no fleet and an assignment error", after)
	}
	page, err := s.AgentsWithAssignmentError(ctx, "", 10)
	must(t, err)
	if len(page.Items) != 1 || page.Items[0].ID != "a1" {
		t.Fatalf("agents with an assignment error %v, want a1", page.Items)
	}
}
