// Package agentevent reacts to what agents report: for every change of an
// agent item that can move a target (not a coalesced heartbeat), it runs an
// evaluation of the active rollouts of the agent's fleet at once, so
// that the engine reacts within about a second (docs/engine.md). The
// DynamoDB stream of the agents table delivers the changes: the agent-event
// Lambda in the cloud, a stream poller in the local stack.
package agentevent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
)

// Change is one change of an agent item: the agent as written (New, nil for
// a deleted one) and what the write changed (agent.Written: the writer's
// stamp, or the comparison of both images where the stream carries them).
type Change struct {
	ID  string
	New *agent.Agent
	agent.Written
}

// Between is the change from old to new (nil old: a new agent; nil new: a
// deleted one), as both images tell it.
func Between(old, new *agent.Agent) Change {
	c := Change{New: new, Written: agent.WrittenBetween(old, new)}
	if new != nil {
		c.ID = new.ID
	} else if old != nil {
		c.ID = old.ID
	}
	return c
}

// Matters reports whether a change can move a target: it changed a
// decisive fact (agent.Agent.Decisive), or the agent is new or deleted.
// Heartbeats move only lastSeen, which the engine does not read to decide,
// nor the hash of the effective configuration (informational: the reported
// hash decides). Nor does it read what the agent is asked to run
// (desiredHash, targetVersion, packageOffer): those are written by the
// evaluations' own orders and the planner, and an evaluation for them would
// only reread the rollout (a wave of 1,000 targets writes 1,000 desired
// hashes, ten stream batches, ten evaluations of 2,000 items that change
// nothing). Everything else (a report, a connection, a new fleet) may move
// a target.
func Matters(c Change) bool {
	return c.New == nil || c.Decisive
}

// Rollouts names the active rollout of a fleet and kind ("" for none).
type Rollouts interface {
	ActiveRolloutID(ctx context.Context, fleet string, k policy.Kind) (string, error)
}

// Evaluator runs the evaluation of what some agents reported in a rollout
// and stores it (enginetask.Evaluator.EvaluateAgents: their targets alone when
// that decides them, otherwise the whole rollout). images holds the newest
// image of each agent in the batch (none for one deleted).
type Evaluator interface {
	EvaluateAgents(ctx context.Context, rolloutID string, agentIDs []string, images map[string]agent.Agent) error
}

// Assigner assigns agents to fleets against the applied revision and
// returns the fleets whose members changed (assignment.Runner).
type Assigner interface {
	Assign(ctx context.Context, ids []string) ([]string, error)
}

// FleetPlanner plans a fleet and kind: stragglers, a rollout for an agent
// that moved in, its target version (plannertask.Runner, or remote.Lambda
// through the planner Lambda).
type FleetPlanner interface {
	PlanFleet(ctx context.Context, fleet string, k policy.Kind) (plannertask.Reply, error)
}

// Handler evaluates the rollouts that a batch of changes concerns. With an
// Assigner, agents that are new or whose attributes changed are assigned
// to their fleet first, and with a Planner the fleets they joined or left
// are planned, each once per batch.
type Handler struct {
	Rollouts  Rollouts
	Evaluator Evaluator
	Assigner  Assigner
	Planner   FleetPlanner
	// Collectors reads the collector a myriarch-updater serves, so that an
	// updater's report (a step, a failed install) runs the evaluation of its
	// collector's version rollout; nil ignores updaters' changes.
	Collectors Collectors
	Log        *slog.Logger
}

// Collectors reads one agent (store.GetAgent).
type Collectors interface {
	GetAgent(ctx context.Context, id string) (agent.Agent, bool, error)
}

// NeedsAssignment reports whether a change may change the agent's fleet: a
// new agent, or one whose attributes changed.
func NeedsAssignment(c Change) bool {
	return c.New != nil && c.Attributes
}

// Handle assigns the agents that need it and plans the fleets that changed,
// then runs one evaluation per active rollout of every fleet a relevant change
// touches (the agent's fleet, and its previous one when it moved), each
// rollout once per batch, over the agents of the batch in that fleet. An
// error makes the stream deliver the batch again;
// assignments, plans and evaluations are idempotent, so a repeated one changes
// nothing.
func (h Handler) Handle(ctx context.Context, changes []Change) error {
	var errs []error
	if err := h.assign(ctx, changes); err != nil {
		errs = append(errs, err)
	}
	fleets := map[string][]string{} // fleet -> agents of the batch in it, in order
	seen := map[[2]string]bool{}
	images := newest(changes)
	collectors, err := h.collectorsOf(ctx, changes)
	if err != nil {
		errs = append(errs, err)
	}
	add := func(fleet, id string) {
		if fleet != "" && !seen[[2]string{fleet, id}] {
			seen[[2]string{fleet, id}] = true
			fleets[fleet] = append(fleets[fleet], id)
		}
	}
	for _, c := range changes {
		if !Matters(c) {
			continue
		}
		if c.New == nil && c.PrevFleet == "" {
			// Deleted, and the stream says no more than its key: the rollouts
			// that hold it find it gone at their next whole evaluation.
			h.logger().Info("agent deleted: its targets are judged by their rollouts' next evaluation", "agent", c.ID)
		}
		add(c.PrevFleet, c.ID)
		if c.New != nil {
			add(c.New.Fleet, c.ID)
		}
		for _, col := range collectors[c] {
			add(col.Fleet, col.ID)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(fleets)) {
		ids, lookupErrs := h.active(ctx, f)
		errs = append(errs, lookupErrs...)
		for _, id := range ids {
			if err := h.Evaluator.EvaluateAgents(ctx, id, fleets[f], images); err != nil && !errors.Is(err, enginetask.ErrRolloutNotFound) {
				errs = append(errs, fmt.Errorf("evaluate rollout %s: %w", id, err))
			}
		}
	}
	if len(errs) > 0 && ctx.Err() == nil { // a shutdown is no error to report
		h.logger().Error("agent events", "fleets", len(fleets), "errors", len(errs), "error", errors.Join(errs...).Error())
	}
	return errors.Join(errs...)
}

// kinds are the rollout kinds a fleet may have one active rollout of each.
var kinds = [...]policy.Kind{policy.KindConfig, policy.KindVersion}

// active is the active rollouts of fleet f, configuration first. Both kinds
// are looked up at once: each lookup is a read that waits its turn behind
// a wave's writes, and a batch's evaluation waits for them.
func (h Handler) active(ctx context.Context, f string) ([]string, []error) {
	var ids [len(kinds)]string
	var errs [len(kinds)]error
	var wg sync.WaitGroup
	for i, k := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ids[i], errs[i] = h.Rollouts.ActiveRolloutID(ctx, f, k); errs[i] != nil {
				errs[i] = fmt.Errorf("active %s rollout of fleet %s: %w", k, f, errs[i])
			}
		}()
	}
	wg.Wait()
	var out []string
	var failed []error
	for i := range kinds {
		if errs[i] != nil {
			failed = append(failed, errs[i])
		} else if ids[i] != "" {
			out = append(out, ids[i])
		}
	}
	return out, failed
}

// newest is the newest image of each agent in a batch, whether its change
// matters or not (a later change that does not still carries what the one
// before reported); an agent whose last change deleted it has none.
func newest(changes []Change) map[string]agent.Agent {
	out := map[string]agent.Agent{}
	for _, c := range changes {
		if c.New != nil {
			out[c.ID] = *c.New
		} else {
			delete(out, c.ID)
		}
	}
	return out
}

// assign assigns the agents of the batch that need it, then plans the
// fleets they joined or left.
func (h Handler) assign(ctx context.Context, changes []Change) error {
	if h.Assigner == nil {
		return nil
	}
	var ids []string
	for _, c := range changes {
		if NeedsAssignment(c) {
			ids = append(ids, c.New.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	touched, err := h.Assigner.Assign(ctx, ids)
	errs := []error{err}
	if h.Planner != nil {
		for _, f := range touched {
			for _, k := range kinds {
				if _, err := h.Planner.PlanFleet(ctx, f, k); err != nil {
					errs = append(errs, fmt.Errorf("plan fleet %s (%s): %w", f, k, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (h Handler) logger() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}

// collectorsOf reads the collectors that the updaters of the batch's
// changes that matter serve (each once): an updater is in no fleet, and
// what it reports is its collector's progress.
func (h Handler) collectorsOf(ctx context.Context, changes []Change) (map[Change][]*agent.Agent, error) {
	if h.Collectors == nil {
		return nil, nil
	}
	out := map[Change][]*agent.Agent{}
	read := map[string]*agent.Agent{}
	var errs []error
	for _, c := range changes {
		if !Matters(c) {
			continue
		}
		links := []string{c.PrevCollector}
		if c.New != nil {
			links = append(links, c.New.LinkedCollector())
		}
		for _, id := range links {
			if id == "" {
				continue
			}
			col, done := read[id]
			if !done {
				a, found, err := h.Collectors.GetAgent(ctx, id)
				if err != nil {
					errs = append(errs, fmt.Errorf("read collector %s of updater %s: %w", id, c.ID, err))
				}
				if found && err == nil {
					col = &a
				}
				read[id] = col
			}
			if col != nil {
				out[c] = append(out[c], col)
			}
		}
	}
	return out, errors.Join(errs...)
}
