package assignment

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
)

// sweepStore is a scripted store: the sweep and the pointer as the test
// sets them, one page of agents, and an AdvanceSweep that can lose.
type sweepStore struct {
	sweeps  []Sweep // CurrentSweep returns them in turn, the last one ever after
	rev     int64
	page    []Swept
	advance bool // AdvanceSweep moves the cursor
	pages   int
}

func (s *sweepStore) AppliedFleets(context.Context) ([]fleet.Fleet, int64, error) {
	return nil, s.rev, nil
}
func (s *sweepStore) AssignAgent(context.Context, string, int64, func(agent.Agent) Outcome) (agent.Agent, agent.Agent, bool, error) {
	return agent.Agent{}, agent.Agent{}, false, nil
}
func (s *sweepStore) PendingAssignments(context.Context) ([]string, error) { return nil, nil }
func (s *sweepStore) CurrentSweep(context.Context) (Sweep, error) {
	sw := s.sweeps[0]
	if len(s.sweeps) > 1 {
		s.sweeps = s.sweeps[1:]
	}
	return sw, nil
}
func (s *sweepStore) AssignPage(_ context.Context, rev int64, _ string, _ int, _ func(agent.Agent) Outcome) ([]Swept, string, error) {
	s.pages++
	return s.page, "", nil
}
func (s *sweepStore) AdvanceSweep(context.Context, int64, string, string) (bool, error) {
	return s.advance, nil
}

func runSweep(t *testing.T, st *sweepStore) SweepResult {
	t.Helper()
	now := time.Unix(0, 0)
	out, err := Runner{Store: st, Clock: func() time.Time { return now }}.Sweep(context.Background(), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A revision applied between the read of the sweep and the read of the
// pointer: the sweep of the newer revision is taken and swept, not left.
func TestSweep_RevisionAppliedMeanwhile_TheNewerSweepIsSwept(t *testing.T) {
	st := &sweepStore{sweeps: []Sweep{{Rev: 4}, {Rev: 5}}, rev: 5, advance: true,
		page: []Swept{{Before: agent.Agent{ID: "a"}, After: agent.Agent{ID: "a", Fleet: "edge"}, Changed: true}}}
	out := runSweep(t, st)
	if st.pages != 1 || out.Rev != 5 || !out.Done || !slices.Equal(out.Touched, []string{"edge"}) {
		t.Fatalf("pages %d, result %+v: want revision 5's sweep done, edge touched", st.pages, out)
	}
}

// Two sweepers take the same page: this one's write moved an agent, the
// other's lost its race and saw no change, and the other advanced the
// cursor first. The fleets of this one's write are still reported, so that
// they are planned; the page is not counted twice.
func TestSweep_CursorTakenByAnother_TheFleetsOfOurWritesAreTouched(t *testing.T) {
	st := &sweepStore{sweeps: []Sweep{{Rev: 5}, {Rev: 5, Done: true}}, rev: 5, advance: false,
		page: []Swept{
			{Before: agent.Agent{ID: "a", Fleet: "edge"}, After: agent.Agent{ID: "a", Fleet: "lab"}, Changed: true},
			{Before: agent.Agent{ID: "b", Fleet: "core"}, After: agent.Agent{ID: "b", Fleet: "core"}},
		}}
	out := runSweep(t, st)
	if !slices.Equal(out.Touched, []string{"edge", "lab"}) || out.Scanned != 0 || !out.Done {
		t.Fatalf("result %+v: want edge and lab touched, nothing counted, done", out)
	}
}

// Agents that got their first desired hash are counted as bootstrapped, by
// fleet; one that had a desired hash (a moved agent keeps it), one in no
// fleet and one whose write lost its race are not.
func TestSweep_CountsTheBootstrappedByFleet(t *testing.T) {
	st := &sweepStore{sweeps: []Sweep{{Rev: 5}}, rev: 5, advance: true,
		page: []Swept{
			{Before: agent.Agent{ID: "a"}, After: agent.Agent{ID: "a", Fleet: "edge", DesiredHash: "h1"}, Changed: true},
			{Before: agent.Agent{ID: "b"}, After: agent.Agent{ID: "b", Fleet: "edge", DesiredHash: "h1"}, Changed: true},
			{Before: agent.Agent{ID: "c"}, After: agent.Agent{ID: "c", Fleet: "lab", DesiredHash: "h2"}, Changed: true},
			{Before: agent.Agent{ID: "d", Fleet: "lab", DesiredHash: "h2"}, After: agent.Agent{ID: "d", Fleet: "edge", DesiredHash: "h2"}, Changed: true},
			{Before: agent.Agent{ID: "e"}, After: agent.Agent{ID: "e"}},
			{Before: agent.Agent{ID: "f"}, After: agent.Agent{ID: "f", Fleet: "edge", DesiredHash: "h1"}},
		}}
	out := runSweep(t, st)
	if out.Bootstrapped["edge"] != 2 || out.Bootstrapped["lab"] != 1 || len(out.Bootstrapped) != 2 {
		t.Fatalf("bootstrapped %v, want edge 2 and lab 1", out.Bootstrapped)
	}
}
