package api

import (
	"context"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/policy"
)

// planRunLimit bounds a planner run that the API stopped waiting for: it
// goes on in the background, so that its writes are not cut off halfway.
const planRunLimit = 2 * time.Minute

// planResult is the schema PlanResult.
type planResult struct {
	Kind           policy.Kind `json:"kind"`
	Planned        bool        `json:"planned"`
	RolloutID      string      `json:"rolloutId,omitempty"`
	Created        bool        `json:"created,omitempty"`
	EndedRolloutID string      `json:"endedRolloutId,omitempty"`
	Stragglers     int         `json:"stragglers"`
	Bootstrapped   int         `json:"bootstrapped,omitempty"`
	Note           string      `json:"note,omitempty"`
	Error          string      `json:"error,omitempty"`
	targets        int         // of the created rollout
}

// planNow plans a fleet and kind, waiting up to PlanTimeout.
func (s *server) planNow(ctx context.Context, fleetName string, k policy.Kind) planResult {
	budget, cancel := context.WithTimeout(ctx, s.PlanTimeout)
	defer cancel()
	return s.plan(ctx, budget, fleetName, k)
}

// plan asks the planner to plan a fleet and kind and waits until it
// finished or budget is done. Planned is false when it did not finish in
// time or failed; the scheduled planner run catches up either way.
func (s *server) plan(ctx, budget context.Context, fleetName string, k policy.Kind) planResult {
	type outcome struct {
		reply plannertask.Reply
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- outcome{err: fmt.Errorf("planner panicked: %v", v)}
			}
		}()
		runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), planRunLimit)
		defer cancel()
		reply, err := s.Planning.PlanFleet(runCtx, fleetName, k)
		done <- outcome{reply, err}
	}()
	res := planResult{Kind: k}
	select {
	case o := <-done:
		if o.err != nil {
			s.Log.ErrorContext(ctx, "plan fleet", "fleet", fleetName, "kind", string(k), "error", o.err.Error())
			res.Error = "the planner failed; the scheduled run retries"
			return res
		}
		return s.planned(ctx, fleetName, k, o.reply)
	case <-budget.Done():
		res.Note = fmt.Sprintf("the planner did not finish within %s; it goes on, and the fleet shows the outcome", s.PlanTimeout)
	}
	return res
}

// planned describes a finished run. The rollout is the one the run created
// or extended, else the fleet's active rollout if it heads for the run's
// target (a rollout that already runs toward it).
func (s *server) planned(ctx context.Context, fleetName string, k policy.Kind, r plannertask.Reply) planResult {
	res := planResult{Kind: k, Planned: true, Stragglers: r.Stragglers, Bootstrapped: r.Bootstrapped, Note: r.Note, EndedRolloutID: r.EndedRolloutID}
	switch {
	case r.CreatedRolloutID != "":
		res.RolloutID, res.Created, res.targets = r.CreatedRolloutID, true, r.CreatedTargets
	case r.UpdatedRolloutID != "":
		res.RolloutID = r.UpdatedRolloutID
	case r.Target != "":
		page, err := s.Store.RolloutsPage(ctx, fleetName, k, "", 1)
		if err == nil && len(page.Items) > 0 && page.Items[0].Status.Active() && page.Items[0].ToRef == r.Target {
			res.RolloutID = page.Items[0].ID
		}
	}
	return res
}
