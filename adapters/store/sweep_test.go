package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/selector"
)

// Applying a revision records its sweep with the pointer; the cursor moves
// only from where it is stored, for the revision stored; a newer revision's
// sweep replaces an older unfinished one; a done sweep does not move.
func TestSweep_CursorAdvancesConditionally(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	current := func() assignment.Sweep {
		sw, err := s.CurrentSweep(ctx)
		must(t, err)
		return sw
	}
	if sw := current(); sw != (assignment.Sweep{}) {
		t.Fatalf("sweep before any apply %+v, want none", sw)
	}
	must(t, s.PutRevision(ctx, rev("c1", "edge"), t0))
	if sw := current(); sw != (assignment.Sweep{Rev: 1}) {
		t.Fatalf("sweep after the first apply %+v, want revision 1 from the start", sw)
	}
	advance := func(rev int64, from, to string, want bool) {
		t.Helper()
		moved, err := s.AdvanceSweep(ctx, rev, from, to)
		must(t, err)
		if moved != want {
			t.Fatalf("advance %d %q -> %q: moved %v, want %v", rev, from, to, moved, want)
		}
	}
	advance(1, "", "a05", true)
	advance(1, "", "a09", false) // a sweeper that read the start: it lost
	advance(1, "a09", "a12", false)
	advance(2, "a05", "a12", false) // no such revision's sweep
	if sw := current(); sw != (assignment.Sweep{Rev: 1, Cursor: "a05"}) {
		t.Fatalf("sweep %+v, want revision 1 at a05", sw)
	}
	must(t, s.PutRevision(ctx, rev("c2", "edge"), t0))
	if sw := current(); sw != (assignment.Sweep{Rev: 2}) {
		t.Fatalf("sweep after the second apply %+v, want revision 2 from the start (it replaces 1's)", sw)
	}
	advance(1, "a05", "a12", false) // the old sweeper cannot move the new sweep
	advance(2, "", "a03", true)
	advance(2, "a03", "", true) // the last page: done
	if sw := current(); sw != (assignment.Sweep{Rev: 2, Done: true}) {
		t.Fatalf("sweep %+v, want revision 2 done", sw)
	}
	advance(2, "", "a01", false)
	advance(2, "a03", "a04", false)
}

// sweepFleets are fleets of the sweep tests: the agents' label picks one.
func sweepFleets() []fleet.Fleet {
	of := func(name string) fleet.Fleet {
		return fleet.Fleet{Name: name, Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": name}},
			Config: fleet.Config{Hash: "h-" + name}}
	}
	return []fleet.Fleet{of("edge"), of("lab")}
}

// seedAssigned writes n agents a00.. labelled edge but stored in fleet lab
// by revision 1 (not pending): only a sweep moves them.
func seedAssigned(t testing.TB, s *Store, n int) {
	for i := 0; i < n; i++ {
		r := AgentRecord{Agent: agent.Agent{ID: fmt.Sprintf("a%02d", i), Fleet: "lab", DesiredHash: "h-lab", Online: true,
			Attributes: map[string]string{"labels.fleet": "edge"}}, AssignedRev: 1}
		must(t, s.putAgent(context.Background(), r))
	}
}

// failAfter fails AssignPage after the first pages calls.
type failAfter struct {
	*Store
	pages int
}

func (f *failAfter) AssignPage(ctx context.Context, rev int64, cursor string, limit int, decide func(agent.Agent) assignment.Outcome) ([]assignment.Swept, string, error) {
	if f.pages == 0 {
		return nil, "", errors.New("throttled")
	}
	f.pages--
	return f.Store.AssignPage(ctx, rev, cursor, limit, decide)
}

// A sweep stopped by an error after one page, then given no time, leaves
// the rest of the agents where they were; the next sweep goes on from the
// stored cursor and assigns them, without counting the first page again.
// An agent assigned against a newer revision is left as it is. A finished
// sweep costs one read.
func TestSweep_InterruptedSweepResumesFromTheCursor(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seedAssigned(t, s, 25)
	newer := AgentRecord{Agent: agent.Agent{ID: "z-newer", Fleet: "lab", Attributes: map[string]string{"labels.fleet": "edge"}}, AssignedRev: 99}
	must(t, s.putAgent(ctx, newer))
	must(t, s.PutRevision(ctx, rev("c1"), t0)) // the pointer at 1, its sweep recorded
	store := fixedFleets{Store: s, fleets: sweepFleets()}
	clock := func() time.Time { return t0 }
	flaky := &failAfter{Store: s, pages: 1}
	res, err := assignment.Runner{Store: struct {
		fixedFleets
		assignment.SweepStore
	}{store, flaky}, Clock: clock, PageSize: 10}.Sweep(ctx, t0.Add(time.Minute))
	if err == nil || res.Done || res.Scanned != 10 {
		t.Fatalf("sweep %+v (%v), want an error after one page of 10", res, err)
	}
	moved := func() (n int) {
		for i := 0; i < 25; i++ {
			r, err := s.GetAgentRecord(ctx, fmt.Sprintf("a%02d", i))
			must(t, err)
			if r.Fleet == "edge" {
				if r.AssignedRev != 1 || r.DesiredHash != "h-lab" {
					t.Fatalf("agent %s: assigned against %d, desired %q; want revision 1, its desired hash kept", r.ID, r.AssignedRev, r.DesiredHash)
				}
				n++
			}
		}
		return n
	}
	if n := moved(); n != 10 {
		t.Fatalf("%d agents in edge after the first page, want 10", n)
	}
	runner := assignment.Runner{Store: store, Clock: clock, PageSize: 10}
	if res, err := runner.Sweep(ctx, t0); err != nil || res.Scanned != 0 || res.Done {
		t.Fatalf("sweep without time %+v (%v), want nothing swept", res, err)
	}
	res, err = runner.Sweep(ctx, t0.Add(time.Minute))
	must(t, err)
	if !res.Done || res.Whole || res.Scanned != 16 || res.Moved != 15 || len(res.Touched) != 2 {
		t.Fatalf("resumed sweep %+v, want done, the 16 agents after the cursor, 15 moved between edge and lab", res)
	}
	if n := moved(); n != 25 {
		t.Fatalf("%d agents in edge after the sweep, want 25", n)
	}
	if r, _ := s.GetAgentRecord(ctx, "z-newer"); r.Fleet != "lab" || r.AssignedRev != 99 {
		t.Fatalf("agent assigned against a newer revision: %+v, want it left in lab at 99", r)
	}
	s.ResetUsage()
	if res, err := runner.Sweep(ctx, t0.Add(time.Minute)); err != nil || !res.Done || res.Scanned != 0 {
		t.Fatalf("sweep after done %+v (%v)", res, err)
	}
	if u := s.Usage(); u.Requests != 1 || u.ItemsWritten != 0 {
		t.Fatalf("a finished sweep cost %v, want one read", u)
	}
}

// A page writes only agents that change, on the scanned record's counter:
// an agent written between the page's read and its write is read again
// and decided again (the write that came between is kept).
func TestSweep_PageWritesOnTheScannedVersion(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seedAssigned(t, s, 3)
	stay := AgentRecord{Agent: agent.Agent{ID: "a-stays", Fleet: "lab", DesiredHash: "h-lab", Attributes: map[string]string{"labels.fleet": "lab"}}, AssignedRev: 1}
	must(t, s.putAgent(ctx, stay))
	raced := false
	decide := func(a agent.Agent) assignment.Outcome {
		if a.ID == "a01" && !raced {
			raced = true // another writer changes a01 after the page read it
			must(t, s.SetPackageOffer(ctx, "a01", "0.170.0"))
		}
		return assignment.Decide(sweepFleets(), a)
	}
	s.ResetUsage()
	page, next, err := s.AssignPage(ctx, 2, "", 10, decide)
	must(t, err)
	if next != "" || len(page) != 4 {
		t.Fatalf("page of %d agents, next %q; want the 4 agents and no next page", len(page), next)
	}
	// Read: the 4 scanned agents, the racing offer's read of a01 and the
	// re-read of a01 after its write lost; no read per agent. Written: the
	// offer, then a00, a01 (again) and a02; nothing for a-stays.
	if u := s.Usage(); u.ItemsRead != 6 || u.ItemsWritten != 4 {
		t.Fatalf("page usage %v, want 6 items read and 4 written", u)
	}
	r, err := s.GetAgentRecord(ctx, "a01")
	must(t, err)
	if r.Fleet != "edge" || r.PackageOffer != "0.170.0" || r.AssignedRev != 2 {
		t.Fatalf("a01 %+v, want fleet edge at revision 2 with the offer written between", r)
	}
	if r, _ := s.GetAgentRecord(ctx, "a-stays"); r.Version != 1 {
		t.Fatalf("a-stays written (counter %d): its assignment did not change", r.Version)
	}
}
