// Package planner decides, per fleet and kind, whether a rollout must start,
// be superseded or receive stragglers (docs/rollouts.md, "When rollouts
// arise"). Decide is pure; Run loads its input through a small Store and
// carries the decision out.
package planner

import (
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// Input is everything one planner run for a fleet and kind needs.
type Input struct {
	FleetName string
	Fleet     *fleet.Fleet // nil when the fleet no longer exists in Git
	Kind      policy.Kind
	Commit    string                   // the applied revision
	Policies  map[string]policy.Policy // by name, from the applied revision
	Selection *selection.Selection     // the stored UI selection, if any
	Agents    []agent.Agent            // the fleet's assigned collectors
	Active    *Active                  // the active rollout of the fleet and kind
	// LastTargets holds, per agent, its most recent target of this kind in
	// any rollout, with that rollout's status (for the exclusions).
	LastTargets  map[string]LastTarget
	NewRolloutID string
	Now          time.Time
	// Liveness tells gone agents (offline beyond the retention), which get
	// no new targets; the zero value keeps every agent.
	Liveness agent.Liveness
	// ExecutorObjects are the executor objects of the applied revision by
	// name (version runs): a webhook or awx rollout keeps a snapshot of
	// its fleet's.
	ExecutorObjects map[string]executorobject.Object
}

// Active is a rollout that is not final, with its targets.
type Active struct {
	Rollout rollout.Rollout
	Targets []rollout.Target
}

// LastTarget is an agent's most recent target of a kind.
type LastTarget struct {
	Target        rollout.Target
	RolloutStatus rollout.Status
}

// Decision is what the run decided; Run (or another adapter) carries it out
// in the order of the fields.
type Decision struct {
	// Reconcile is the outcome of the conflict rules for the stored
	// selection (version runs only); nil when there is none.
	Reconcile *selection.Outcome
	// Target is the effective target: the assigned hash or target version.
	Target string
	// TargetSource is where a version target comes from.
	TargetSource selection.Source
	// AgentTargetVersions are member agents whose TargetVersion must change.
	AgentTargetVersions map[string]string
	// Bootstrap are agents without a desired hash: they get the assigned hash
	// directly, without a rollout. CatchUp are agents whose target of the
	// current hash was skipped in a completed rollout: they get it directly too.
	Bootstrap []string
	CatchUp   []string

	// Ended is the active rollout, superseded or failed, with the targets
	// it cancelled and the executor orders (Cancel) of version targets.
	Ended *Ended
	// Stragglers are added to the last wave of Updated (the active rollout).
	Updated    *rollout.Rollout
	Stragglers []rollout.Target
	// Created is the new rollout with its targets.
	Created *Active
	// Selection is the stored selection with plannedAt (and rolloutId) set.
	Selection *selection.Selection
	Audit     []audit.Entry
	// Note says, for logs, why nothing happened or what blocked the run.
	Note string
	// Relevant counts the agents the target concerns (a different desired
	// hash or version), Excluded those of them that get no target, and why.
	// They are what a plan shows (core/predict); carrying the decision out
	// needs neither.
	Relevant int
	Excluded []Exclusion
}

// Exclusion is a relevant agent that gets no target: Code says which rule
// keeps it out, RolloutID the rollout of the last target that rule read.
type Exclusion struct {
	AgentID   string
	Code      string
	RolloutID string
}

// Codes of Exclusion.
const (
	ExcludedGone    = "gone"    // offline for longer than the retention
	ExcludedFailed  = "failed"  // its target of this change failed or was rolled back
	ExcludedStopped = "stopped" // cancelled or skipped in a rollout that was aborted or rolled back
	ExcludedCatchUp = "catch_up"
	// ExcludedOfflineNotBack: skipped as offline in a version rollout and
	// not connected since.
	ExcludedOfflineNotBack = "offline_not_back"
)

// Reason is the English sentence of an exclusion.
func (e Exclusion) Reason() string {
	in := ""
	if e.RolloutID != "" {
		in = " in rollout " + e.RolloutID
	}
	switch e.Code {
	case ExcludedGone:
		return "offline for longer than the retention: no target until it is back"
	case ExcludedFailed:
		return "its target of this change failed or was rolled back" + in + ": only a new target or retry-failed starts it again"
	case ExcludedStopped:
		return "cancelled or skipped" + in + ", which was aborted or rolled back: only a new target starts it again"
	case ExcludedCatchUp:
		return "skipped" + in + ", which completed: it gets the configuration directly (catch-up), without a rollout"
	case ExcludedOfflineNotBack:
		return "skipped as offline" + in + " and not connected since"
	}
	return e.Code
}

// Ended is an active rollout the run ended, with its events
// (rollout.superseded, rollout.failed).
type Ended struct {
	// Before is the rollout as it was, Rollout as the run ended it: the
	// passes that gained their outcome between them are counted.
	Before    rollout.Rollout
	Rollout   rollout.Rollout
	Cancelled []rollout.Target
	Orders    []engine.Order
	Events    []engine.Event
}

// Changed reports whether the decision needs any write.
func (d Decision) Changed() bool {
	return (d.Reconcile != nil && d.Reconcile.Changed()) || len(d.AgentTargetVersions) > 0 || len(d.Bootstrap) > 0 ||
		len(d.CatchUp) > 0 || d.Ended != nil || len(d.Stragglers) > 0 || d.Created != nil || d.Selection != nil
}
