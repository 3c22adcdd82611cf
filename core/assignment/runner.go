package assignment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
)

// Store is what the runner reads and writes.
type Store interface {
	// AppliedFleets are the fleets of the applied revision and the
	// revision pointer's counter (0 before the first apply).
	AppliedFleets(ctx context.Context) ([]fleet.Fleet, int64, error)
	// AssignAgent decides the agent's assignment from its stored view and
	// writes it, with the counter it was computed against; an assignment
	// computed against a newer revision is left as it is.
	AssignAgent(ctx context.Context, id string, rev int64, decide func(agent.Agent) Outcome) (before, after agent.Agent, changed bool, err error)
	// PendingAssignments lists agents whose assignment is still to be
	// computed (new, or their attributes changed): a sparse index.
	PendingAssignments(ctx context.Context) ([]string, error)
	SweepStore
}

// Runner assigns agents to fleets against the applied revision.
type Runner struct {
	Store Store
	Log   *slog.Logger
	// Clock bounds a Sweep by its budget (required for Sweep).
	Clock func() time.Time
	// PageSize is the number of agents a sweep page reads (0:
	// DefaultSweepPage).
	PageSize int
}

// Assign computes and stores the assignment of the agents ids. It returns
// the fleets whose members changed (joined, left, or bootstrapped), which
// the caller plans. If a revision was applied meanwhile, the agents are
// assigned again against it, so an assignment never stays computed on
// fleets that are gone.
func (r Runner) Assign(ctx context.Context, ids []string) ([]string, error) {
	touched := map[string]bool{}
	for attempt := 0; attempt < 3; attempt++ {
		fleets, rev, err := r.Store.AppliedFleets(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the applied fleets: %w", err)
		}
		var errs []error
		for _, id := range ids {
			before, after, changed, err := r.Store.AssignAgent(ctx, id, rev, func(a agent.Agent) Outcome { return Decide(fleets, a) })
			if err != nil {
				errs = append(errs, fmt.Errorf("assign agent %s: %w", id, err))
				continue
			}
			if !changed {
				continue
			}
			r.logger().Info("agent assigned", "agent", id, "name", after.DisplayName(), "fleet", after.Fleet,
				"previousFleet", before.Fleet, "assignmentError", after.AssignmentError)
			touch(touched, before, after)
		}
		if err := errors.Join(errs...); err != nil {
			return slices.Sorted(maps.Keys(touched)), err
		}
		_, now, err := r.Store.AppliedFleets(ctx)
		if err != nil || now == rev {
			return slices.Sorted(maps.Keys(touched)), err
		}
	}
	return slices.Sorted(maps.Keys(touched)), nil
}

// Backstop assigns every agent still pending: what an event missed (a
// stream record lost or failed for good, the agent-event function down).
// It reads a sparse index, a few items, not the agents table.
func (r Runner) Backstop(ctx context.Context) (assigned int, touched []string, err error) {
	ids, err := r.Store.PendingAssignments(ctx)
	if err != nil || len(ids) == 0 {
		return 0, nil, err
	}
	touched, err = r.Assign(ctx, ids)
	return len(ids), touched, err
}

func (r Runner) logger() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}
