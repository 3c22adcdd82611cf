package planner

import (
	"context"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// Store is what a planner run reads and writes. Implementations make every
// write conditional: SaveSelection on the selection's revision, EndRollout
// and UpdateRollout on the rollout's version, CreateRollout on there being no
// active rollout of the fleet and kind. A lost race returns ErrConflict.
// EndRollout stores the events of the end in the same transaction.
type Store interface {
	Fleet(ctx context.Context, name string) (f *fleet.Fleet, commit string, err error)
	Policies(ctx context.Context) (map[string]policy.Policy, error)
	ExecutorObjects(ctx context.Context) (map[string]executorobject.Object, error)
	Selection(ctx context.Context, fleet string) (*selection.Selection, error)
	FleetAgents(ctx context.Context, fleet string) ([]agent.Agent, error)
	ActiveRollout(ctx context.Context, fleet string, k policy.Kind) (*Active, error)
	LastTargets(ctx context.Context, agentIDs []string, k policy.Kind) (map[string]LastTarget, error)

	SaveSelection(ctx context.Context, fleet string, s *selection.Selection, previousRevision int64) error
	SetAgentTargetVersions(ctx context.Context, versions map[string]string) error
	SetDesiredHash(ctx context.Context, agentIDs []string, hash string) error
	EndRollout(ctx context.Context, r rollout.Rollout, cancelled []rollout.Target, events ...notify.Event) error
	AddTargets(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error
	CreateRollout(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error
	AppendAudit(ctx context.Context, es []audit.Entry) error
}

// ErrConflict is returned by a Store whose conditional write lost a race.
var ErrConflict = rollout.ErrConflict

// Planner runs the planner against a store; runs for one fleet and kind must
// be serialized by the caller (one planner Lambda, reserved concurrency 1),
// and the store's conditions catch any that are not.
type Planner struct {
	Store Store
	Clock func() time.Time
	NewID func() string
	// Liveness says which agents are gone (offline beyond the retention):
	// they get no new targets. The zero value keeps every agent.
	Liveness agent.Liveness
}

// Run plans one fleet and kind and carries out the decision. The orders it
// returns (executor Cancel of superseded version targets) are for the caller.
func (p Planner) Run(ctx context.Context, fleetName string, k policy.Kind) (Decision, error) {
	in, err := p.load(ctx, fleetName, k)
	if err != nil {
		return Decision{}, fmt.Errorf("plan fleet %s (%s): %w", fleetName, k, err)
	}
	d := Decide(in)
	if err := p.apply(ctx, in, d); err != nil {
		return d, fmt.Errorf("plan fleet %s (%s): %w", fleetName, k, err)
	}
	return d, nil
}

func (p Planner) load(ctx context.Context, fleetName string, k policy.Kind) (Input, error) {
	live, err := p.Liveness.Snapshot(ctx)
	if err != nil {
		return Input{}, err
	}
	in := Input{FleetName: fleetName, Kind: k, Now: p.Clock(), NewRolloutID: p.NewID(), Liveness: live}
	if in.Fleet, in.Commit, err = p.Store.Fleet(ctx, fleetName); err != nil {
		return in, err
	}
	if in.Policies, err = p.Store.Policies(ctx); err != nil {
		return in, err
	}
	if k == policy.KindVersion {
		if in.ExecutorObjects, err = p.Store.ExecutorObjects(ctx); err != nil {
			return in, err
		}
	}
	if in.Selection, err = p.Store.Selection(ctx, fleetName); err != nil {
		return in, err
	}
	if in.Agents, err = p.Store.FleetAgents(ctx, fleetName); err != nil {
		return in, err
	}
	if in.Active, err = p.Store.ActiveRollout(ctx, fleetName, k); err != nil {
		return in, err
	}
	in.LastTargets, err = p.Store.LastTargets(ctx, LastTargetsNeeded(in), k)
	return in, err
}

// apply writes the decision in the order of a run (docs/rollouts.md, "A run,
// step by step"): the selection and the
// agents' target versions first, then the ended rollout, then stragglers or
// the new rollout, the selection's plannedAt, and the audit entries last.
func (p Planner) apply(ctx context.Context, in Input, d Decision) error {
	s := p.Store
	if o := d.Reconcile; o != nil && o.Changed() {
		var next *selection.Selection
		if o.Effect == selection.Invalidate {
			next = &o.Selection
		}
		if err := s.SaveSelection(ctx, in.FleetName, next, in.Selection.Revision); err != nil {
			return err
		}
	}
	steps := []func() error{
		func() error {
			return nonEmpty(len(d.AgentTargetVersions), func() error { return s.SetAgentTargetVersions(ctx, d.AgentTargetVersions) })
		},
		func() error {
			return nonEmpty(len(d.Bootstrap), func() error { return s.SetDesiredHash(ctx, d.Bootstrap, d.Target) })
		},
		func() error {
			return nonEmpty(len(d.CatchUp), func() error { return s.SetDesiredHash(ctx, d.CatchUp, d.Target) })
		},
		func() error {
			if d.Ended == nil {
				return nil
			}
			e := d.Ended
			events := notify.New(e.Rollout, rollout.Overlay(in.Active.Targets, e.Cancelled), e.Events, in.Now)
			return s.EndRollout(ctx, e.Rollout, e.Cancelled, events...)
		},
		func() error {
			if d.Updated == nil {
				return nil
			}
			return s.AddTargets(ctx, *d.Updated, d.Stragglers)
		},
		func() error {
			if d.Created == nil {
				return nil
			}
			return s.CreateRollout(ctx, d.Created.Rollout, d.Created.Targets)
		},
		func() error {
			if d.Selection == nil {
				return nil
			}
			return s.SaveSelection(ctx, in.FleetName, d.Selection, d.Selection.Revision-1)
		},
		func() error { return nonEmpty(len(d.Audit), func() error { return s.AppendAudit(ctx, d.Audit) }) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func nonEmpty(n int, f func() error) error {
	if n == 0 {
		return nil
	}
	return f()
}

// CancelOrders are the executor orders of a decision.
func (d Decision) CancelOrders() []engine.Order {
	if d.Ended == nil {
		return nil
	}
	return d.Ended.Orders
}
