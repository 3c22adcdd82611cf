package assignment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// A sweep re-assigns every agent after a revision changed the fleets. It is
// stored (one item, the newest revision's) so that whoever runs it next
// resumes where the last one stopped: the apply request within its budget,
// then the planner's minute within its own. A sweep of a newer revision
// replaces an older unfinished one: the older one's agents are all swept
// again against the newer fleets.
type Sweep struct {
	Rev    int64  // the revision pointer's counter the sweep assigns against; 0: none recorded
	Cursor string // the last agent id swept, in the store's scan order ("": from the start)
	Done   bool
}

// Swept is one agent of a sweep page: as it was and as it is now.
type Swept struct {
	Before, After agent.Agent
	Changed       bool
}

// SweepStore keeps the sweep and assigns the agents of one page.
type SweepStore interface {
	// CurrentSweep reads the sweep of the newest applied revision (the
	// zero Sweep when none was ever recorded).
	CurrentSweep(ctx context.Context) (Sweep, error)
	// AssignPage assigns up to limit agents after cursor, each decided
	// from the record the page read and written only when it changes,
	// with the same rules as AssignAgent. next is the cursor after the
	// page, "" after the last one.
	AssignPage(ctx context.Context, rev int64, cursor string, limit int, decide func(agent.Agent) Outcome) (page []Swept, next string, err error)
	// AdvanceSweep moves the cursor of sweep rev from from to to (to ""
	// marks it done) on the condition that the stored sweep is still rev at
	// from; moved is false when it is not (another sweeper advanced it, or
	// a newer revision replaced it): nothing is written then.
	AdvanceSweep(ctx context.Context, rev int64, from, to string) (moved bool, err error)
}

// DefaultSweepPage is the number of agents a sweep reads per page: a page
// of agent items of a few KiB each stays below the 1 MB a Scan returns.
const DefaultSweepPage = 200

// SweepResult is what one Sweep call did.
type SweepResult struct {
	Rev int64
	// Scanned agents by their assignment after the sweep.
	Scanned, Assigned, Unassigned, Moved int
	Conflicts                            []Conflict
	// Touched are the fleets agents joined or left (or were bootstrapped
	// in), sorted: the fleets to plan.
	Touched []string
	// Bootstrapped counts, by fleet, the agents this call gave their
	// fleet's configuration as their first desired hash (the bootstrap
	// rule): they need no rollout.
	Bootstrapped map[string]int
	// Done: the sweep of the applied revision is finished (also when none
	// is recorded). Whole: this call swept every agent of it itself, so the
	// counts are the whole fleet's.
	Done, Whole bool
}

// Conflict is an agent that several fleets select.
type Conflict struct{ AgentID, Error string }

// Fields are the result as log attributes.
func (r SweepResult) Fields() []any {
	return []any{"rev", r.Rev, "scanned", r.Scanned, "moved", r.Moved, "conflicts", len(r.Conflicts), "done", r.Done, "whole", r.Whole}
}

// Sweep continues the sweep of the applied revision page by page while the
// runner's clock is before until (a page started is finished): a page of
// agents, each decided against the revision's fleets, then the cursor
// advanced past it. A page whose cursor another sweeper advanced first is
// not counted twice: the sweep goes on from the stored cursor. It costs
// one read of the sweep when none is unfinished.
func (r Runner) Sweep(ctx context.Context, until time.Time) (out SweepResult, err error) {
	if r.Clock == nil {
		return SweepResult{}, fmt.Errorf("assignment sweep: the runner has no clock")
	}
	st := r.Store
	sw, err := st.CurrentSweep(ctx)
	if err != nil {
		return SweepResult{}, fmt.Errorf("read the assignment sweep: %w", err)
	}
	out = SweepResult{Rev: sw.Rev, Done: sw.Done || sw.Rev == 0}
	if out.Done {
		return out, nil
	}
	fleets, rev, err := r.Store.AppliedFleets(ctx)
	if err != nil {
		return out, fmt.Errorf("read the applied fleets: %w", err)
	}
	if rev > sw.Rev {
		// A revision was applied between the two reads; its sweep was
		// written with its pointer, in one transaction: take that one.
		if sw, err = st.CurrentSweep(ctx); err != nil {
			return out, fmt.Errorf("read the assignment sweep: %w", err)
		}
		out = SweepResult{Rev: sw.Rev, Done: sw.Done}
		if out.Done {
			return out, nil
		}
	}
	if rev != sw.Rev {
		// Applied again meanwhile (the next call takes it up), or a
		// revision applied before sweeps were recorded: nothing to resume.
		r.logger().Warn("assignment sweep: the stored sweep is not the applied revision's", "sweepRev", sw.Rev, "rev", rev)
		return out, nil
	}
	decide := func(a agent.Agent) Outcome { return Decide(fleets, a) }
	touched, whole := map[string]bool{}, sw.Cursor == ""
	defer func() { out.Touched = slices.Sorted(maps.Keys(touched)) }()
	for r.Clock().Before(until) {
		page, next, err := st.AssignPage(ctx, sw.Rev, sw.Cursor, r.pageSize(), decide)
		if err != nil {
			return out, fmt.Errorf("assignment sweep of revision %d after %q: %w", sw.Rev, sw.Cursor, err)
		}
		// The fleets of the agents this call wrote are planned whoever
		// advances the cursor: another sweeper that took the same page
		// lost these writes' races and saw no change.
		for _, p := range page {
			if p.Changed {
				touch(touched, p.Before, p.After)
			}
		}
		moved, err := st.AdvanceSweep(ctx, sw.Rev, sw.Cursor, next)
		if err != nil {
			return out, fmt.Errorf("advance the assignment sweep of revision %d: %w", sw.Rev, err)
		}
		if !moved {
			// Another sweeper took this page (its writes and ours agree:
			// each write is conditional), or a newer revision replaced the
			// sweep: go on from what is stored, if it is still ours.
			whole = false
			if sw, err = st.CurrentSweep(ctx); err != nil {
				return out, fmt.Errorf("read the assignment sweep: %w", err)
			}
			if sw.Rev != rev || sw.Done {
				out.Done = sw.Done && sw.Rev == rev
				return out, nil
			}
			continue
		}
		out.count(page)
		if next == "" {
			out.Done, out.Whole = true, whole
			return out, nil
		}
		sw.Cursor = next
	}
	return out, nil
}

func (out *SweepResult) count(page []Swept) {
	for _, s := range page {
		out.Scanned++
		if s.After.AssignmentError != "" {
			out.Conflicts = append(out.Conflicts, Conflict{AgentID: s.After.ID, Error: s.After.AssignmentError})
		}
		if s.After.Fleet == "" {
			out.Unassigned++
		} else {
			out.Assigned++
		}
		if Moved(s.Before, s.After) {
			out.Moved++
		}
		if s.Changed && s.Before.DesiredHash == "" && s.After.DesiredHash != "" && s.After.Fleet != "" {
			if out.Bootstrapped == nil {
				out.Bootstrapped = map[string]int{}
			}
			out.Bootstrapped[s.After.Fleet]++
		}
	}
}

// touch adds the fleets an agent left and joined (or was bootstrapped in)
// to touched: the fleets to plan.
func touch(touched map[string]bool, before, after agent.Agent) {
	for _, f := range []string{before.Fleet, after.Fleet} {
		if f != "" {
			touched[f] = true
		}
	}
}

func (r Runner) pageSize() int {
	if r.PageSize > 0 {
		return r.PageSize
	}
	return DefaultSweepPage
}
