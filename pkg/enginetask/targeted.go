package enginetask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/pkg/engine"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// TargetStore is what a targeted pass reads and writes besides Store
// (store.Store serves both): the rollout item alone, the targets of some
// agents, and a write of targets on their versions and the rollout's
// unchanged version (a lost race wraps rollout.ErrConflict).
type TargetStore interface {
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	TargetsOf(ctx context.Context, r rollout.Rollout, agentIDs []string) ([]rollout.Target, error)
	SaveTargets(ctx context.Context, r rollout.Rollout, changed []rollout.Target) error
}

// PassAgents is the pass of an agent event: what the reports of agentIDs
// change in rollout rolloutID. When the engine can decide their targets
// alone (engine.EvaluateTargets: an APPLIED report moves a target to its
// health wait, a health report keeps it there or ends it), it reads the rollout item,
// those targets and agents, and writes the targets that changed, without
// touching the rollout: a batch of 100 reports costs about 200 item reads
// instead of two per target of the rollout, and the batches of different
// stream shards do not race each other. A rollout that has not begun is left
// to its execution's first pass. Otherwise (a target failed, one may start,
// the rollout rolls back), and after passAttempts lost races, it is a whole
// pass (Pass). A store without targeted reads always gets whole
// passes.
func (p Passer) PassAgents(ctx context.Context, rolloutID string, agentIDs []string) error {
	_, err := p.passAgents(ctx, rolloutID, agentIDs)
	return err
}

// targeted is what passAgents did: the targets it changed and the earliest
// deadline among them, or the whole pass it fell back to.
type targeted struct {
	changed  []rollout.Target
	deadline time.Time
	whole    *Passed
}

func (p Passer) passAgents(ctx context.Context, rolloutID string, agentIDs []string) (targeted, error) {
	st, ok := p.Store.(TargetStore)
	if ok {
		for attempt := 0; attempt < passAttempts; attempt++ {
			res, decided, err := p.passTargets(ctx, st, rolloutID, agentIDs)
			if err == nil && decided {
				return targeted{changed: res.Changed, deadline: res.NextDeadline}, nil
			}
			if err != nil && !errors.Is(err, rollout.ErrConflict) {
				return targeted{}, err
			}
			if err == nil {
				break // the whole rollout decides
			}
		}
	}
	whole, err := p.Pass(ctx, rolloutID)
	return targeted{whole: &whole}, err
}

// passTargets runs one targeted pass; decided is false when the whole
// rollout must decide instead.
func (p Passer) passTargets(ctx context.Context, st TargetStore, id string, agentIDs []string) (res engine.Result, decided bool, err error) {
	r, err := st.GetRollout(ctx, id)
	if err != nil {
		return res, false, fmt.Errorf("load rollout %s: %w", id, err)
	}
	if r.Status == rollout.Pending {
		// Nothing is in flight yet, and the execution's first pass, started
		// with the rollout, begins it: a pass here would race it and carry
		// out the same orders (a wave's 1,000 desired hashes) twice.
		return res, true, nil
	}
	ts, err := st.TargetsOf(ctx, r, agentIDs)
	if err != nil {
		return res, false, err
	}
	in, err := p.input(ctx, r, ts)
	if err != nil {
		return res, false, err
	}
	res, ok := engine.EvaluateTargets(in)
	if !ok || len(res.Changed) == 0 {
		return res, ok, nil
	}
	if err := st.SaveTargets(ctx, r, res.Changed); err != nil {
		return res, false, fmt.Errorf("save targets of rollout %s: %w", id, err)
	}
	return res, true, nil
}
