package setup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
)

// FleetLister lists the fleets of the applied revision.
type FleetLister interface {
	Fleets(ctx context.Context) ([]fleet.Fleet, string, error)
}

// FleetPlanner plans one fleet and kind.
type FleetPlanner interface {
	PlanFleet(ctx context.Context, fleet string, k policy.Kind) (plannertask.Reply, error)
}

// PlanAll is the scheduled planner run: every fleet of the applied revision,
// both kinds, one after the other. A fleet that fails does not stop the
// others; the errors are joined.
func PlanAll(ctx context.Context, fl FleetLister, p FleetPlanner) (int, error) {
	fleets, _, err := fl.Fleets(ctx)
	if err != nil {
		return 0, fmt.Errorf("list fleets: %w", err)
	}
	var errs []error
	runs := 0
	for _, f := range fleets {
		for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
			if ctx.Err() != nil {
				return runs, errors.Join(append(errs, ctx.Err())...)
			}
			runs++
			if _, err := p.PlanFleet(ctx, f.Name, k); err != nil {
				errs = append(errs, fmt.Errorf("plan %s (%s): %w", f.Name, k, err))
			}
		}
	}
	return runs, errors.Join(errs...)
}

// TickSweepBudget is how long the planner's minute continues an unfinished
// assignment sweep before it plans: well inside the minute between two
// runs (the function may run 300 s), so that a sweep of 100,000 agents that
// an apply left unfinished ends within a few runs (docs/fleets.md).
const TickSweepBudget = 30 * time.Second

// Tick is the planner's minute: first the assignment sweep of the applied
// revision, if an apply left it unfinished (one GetItem when none is), then
// the assignment backstop (agents whose assignment an event missed; a read
// of a sparse index, nothing when none is pending), then every fleet of the
// applied revision is planned, so the fleets a repaired agent joined are
// planned in the same run.
func (d Deps) Tick(ctx context.Context, p FleetPlanner) (runs int, err error) {
	runner := d.Assigner()
	sw, serr := runner.Sweep(ctx, d.Clock().Add(TickSweepBudget))
	if sw.Scanned > 0 || serr != nil {
		d.Log.Info("assignment sweep continued", append(sw.Fields(), "ok", serr == nil)...)
	}
	n, _, aerr := runner.Backstop(ctx)
	if n > 0 {
		d.Log.Warn("assignment backstop: agents assigned that no event had assigned", "agents", n, "ok", aerr == nil)
	}
	runs, err = PlanAll(ctx, d.Store, p)
	if aerr != nil {
		err = errors.Join(fmt.Errorf("assignment backstop: %w", aerr), err)
	}
	if serr != nil {
		err = errors.Join(fmt.Errorf("assignment sweep: %w", serr), err)
	}
	return runs, err
}
