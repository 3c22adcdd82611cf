package enginetask

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// TargetStore is what a targeted evaluation reads and writes besides Store
// (store.Store serves both): the rollout item alone, the targets of some
// agents, and a write of targets on their versions and the rollout's
// unchanged version (a lost race wraps rollout.ErrConflict).
type TargetStore interface {
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	TargetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string) ([]rollout.Target, error)
	SaveTargets(ctx context.Context, r rollout.Rollout, changed []rollout.Target) error
}

// EvaluateAgents is the evaluation of an agent event: what the reports of agentIDs
// change in rollout rolloutID. When the engine can decide their targets
// alone (engine.EvaluateTargets: an APPLIED report moves a target to its
// health wait, a health report keeps it there or ends it), it reads the rollout item,
// those targets and agents, and writes the targets that changed, without
// touching the rollout: a batch of 100 reports costs about 200 item reads
// instead of two per target of the rollout, and the batches of different
// stream shards do not race each other. A rollout that has not begun is left
// to its execution's first evaluation. Otherwise (a target failed, one may start,
// the rollout rolls back), and after passAttempts lost races, it is a whole
// evaluation (Evaluate). A store without targeted reads always gets whole
// evaluations.
//
// images are agents as the caller knows them (the newest image of each in
// a batch of the agents' stream), which may be older than the stored ones;
// nil reads them all. An image decides two things only: a target in
// progress moves to its health wait (what the APPLIED report of the image
// says), and a target in its health wait stays there (a health report that
// fails nothing, or the start-up reports of the new process). Every other
// change, a failure or a success, is decided on the agent as stored, read
// for it. A stale image then at worst leaves a target for a later record,
// which carries the newer report, and a wave's APPLIED and health reports
// are decided without reading their agents again (docs/engine.md).
func (p Evaluator) EvaluateAgents(ctx context.Context, rolloutID string, agentIDs []string, images map[string]agent.Agent) error {
	_, err := p.passAgents(ctx, rolloutID, agentIDs, images)
	return err
}

// targeted is what passAgents did: the targets it changed and the earliest
// deadline among them, or the whole evaluation it fell back to.
type targeted struct {
	changed  []rollout.Target
	deadline time.Time
	whole    *Evaluated
}

func (p Evaluator) passAgents(ctx context.Context, rolloutID string, agentIDs []string, images map[string]agent.Agent) (targeted, error) {
	st, ok := p.Store.(TargetStore)
	if ok {
		for attempt := 0; attempt < passAttempts; attempt++ {
			res, decided, err := p.passTargets(ctx, st, rolloutID, agentIDs, images)
			if err == nil && decided {
				return res, nil
			}
			if err != nil && !errors.Is(err, rollout.ErrConflict) {
				return targeted{}, err
			}
			if err == nil {
				break // the whole rollout decides
			}
		}
	}
	whole, err := p.Evaluate(ctx, rolloutID)
	return targeted{whole: &whole}, err
}

// passTargets runs one targeted evaluation; decided is false when the whole
// rollout must decide instead. The targets in flight whose agents have an
// image are evaluated on the images first; what those do not decide is
// evaluated on the agents as stored.
func (p Evaluator) passTargets(ctx context.Context, st TargetStore, id string, agentIDs []string, images map[string]agent.Agent) (out targeted, decided bool, err error) {
	r, err := st.GetRollout(ctx, id)
	if err != nil {
		return out, false, fmt.Errorf("load rollout %s: %w", id, err)
	}
	if r.Status == rollout.Pending {
		// Nothing is in flight yet, and the execution's first evaluation, started
		// with the rollout, begins it: an evaluation here would race it and carry
		// out the same orders (a wave's 1,000 desired hashes) twice.
		return out, true, nil
	}
	ts, err := st.TargetsOf(ctx, r, agentIDs)
	if err != nil {
		return out, false, err
	}
	// A claimed start is its evaluation's until that evaluation stores the answer
	// (claim.go); the evaluation's follow-up reads the agents that reported
	// meanwhile. Deciding it here would make that save lose its race.
	ts = slices.DeleteFunc(ts, func(t rollout.Target) bool { return claimed(r.Kind, t) })
	known, stored := byImage(ts, images)
	if len(known) > 0 {
		in, err := p.inputOf(ctx, r, known, imagesOf(known, images))
		if err != nil {
			return out, false, err
		}
		res, ok := engine.EvaluateTargets(in)
		if ok && toHealthWait(res.Changed) {
			if err := p.saveTargets(ctx, st, r, &out, res); err != nil {
				return out, false, err
			}
		} else {
			stored = append(stored, known...)
		}
	}
	if len(stored) == 0 && len(known) > 0 {
		return out, true, nil // the images decided them all
	}
	// Also without a target (the batch's agents have none in a wave in
	// flight): the engine still says whether the rollout must decide, as
	// one rolling back must (its next unit may be waiting for these agents).
	in, err := p.input(ctx, r, stored)
	if err != nil {
		return out, false, err
	}
	res, ok := engine.EvaluateTargets(in)
	if !ok {
		return out, false, nil
	}
	return out, true, p.saveTargets(ctx, st, r, &out, res)
}

// saveTargets stores the targets a targeted step changed and adds them, and
// its deadline, to out.
func (p Evaluator) saveTargets(ctx context.Context, st TargetStore, r rollout.Rollout, out *targeted, res engine.Result) error {
	if len(res.Changed) > 0 {
		if err := st.SaveTargets(ctx, r, res.Changed); err != nil {
			return fmt.Errorf("save targets of rollout %s: %w", r.ID, err)
		}
	}
	out.changed = append(out.changed, res.Changed...)
	if d := res.NextDeadline; !d.IsZero() && (out.deadline.IsZero() || d.Before(out.deadline)) {
		out.deadline = d
	}
	return nil
}

// byImage splits targets into those in flight (in progress or in their
// health wait) whose agent has an image and the rest.
func byImage(ts []rollout.Target, images map[string]agent.Agent) (known, rest []rollout.Target) {
	for _, t := range ts {
		if _, ok := images[t.AgentID]; ok && (t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying) {
			known = append(known, t)
		} else {
			rest = append(rest, t)
		}
	}
	return known, rest
}

func imagesOf(ts []rollout.Target, images map[string]agent.Agent) map[string]agent.Agent {
	out := make(map[string]agent.Agent, len(ts))
	for _, t := range ts {
		out[t.AgentID] = images[t.AgentID]
	}
	return out
}

// toHealthWait reports whether every changed target is in its health wait,
// entered now or kept (its progress moved): the only outcome an image
// decides. A target the image would fail or let succeed is decided on its
// agent as stored.
func toHealthWait(changed []rollout.Target) bool {
	for _, t := range changed {
		if t.Status != rollout.TargetVerifying {
			return false
		}
	}
	return true
}
