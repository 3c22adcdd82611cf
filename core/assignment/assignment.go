// Package assignment decides which fleet an agent belongs to as it reports,
// not only when a revision is applied: an agent is assigned when it first
// reports and re-assigned when its attributes change (the most specific
// fleet selector wins; equally specific ones are an assignment error and
// leave it unassigned). A newly assigned agent without a desired hash gets
// its fleet's configuration at once (the bootstrap rule); everything else
// (stragglers of an active rollout, a rollout for a moved agent) is the
// planner's, which the caller runs for the fleets an assignment touched.
//
// Decide is pure. Runner carries decisions out for the agent-event path
// and for the periodic backstop, which repairs what an event missed.
package assignment

import (
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/revision"
)

// Outcome is an agent's assignment under one revision.
type Outcome struct {
	Fleet string // "" when no fleet selects the agent, or several do
	Error string // why several fleets leave the agent unassigned
	// Bootstrap is the desired hash an agent without one gets: its new
	// fleet's rendered configuration. Empty when the agent has a desired
	// hash already (a moved agent keeps it: the planner rolls it out).
	Bootstrap string
}

// Decide assigns agent a among fleets, the fleets of the applied revision.
// A myriarch-updater belongs to no fleet, whatever its attributes (it
// reports its host's, as its collector does): it is never a rollout's
// target, and serves its collector in whichever fleet that is.
func Decide(fleets []fleet.Fleet, a agent.Agent) Outcome {
	if a.IsUpdater() {
		return Outcome{}
	}
	as := revision.Revision{Fleets: fleets}.Assign(a)
	o := Outcome{Fleet: as.Fleet, Error: as.Error}
	if o.Fleet == "" || a.DesiredHash != "" {
		return o
	}
	for _, f := range fleets {
		if f.Name == o.Fleet {
			o.Bootstrap = f.Config.Hash
		}
	}
	return o
}

// Apply writes the outcome into a: the fleet, the assignment error and the
// bootstrap hash. It reports whether a changed.
func (o Outcome) Apply(a *agent.Agent) bool {
	before := *a
	a.Fleet, a.AssignmentError = o.Fleet, o.Error
	if o.Bootstrap != "" && a.DesiredHash == "" {
		a.DesiredHash = o.Bootstrap
	}
	return a.Fleet != before.Fleet || a.AssignmentError != before.AssignmentError || a.DesiredHash != before.DesiredHash
}

// Moved reports whether an assignment took the agent from one fleet to
// another (or into or out of one): the fleets both sides must be planned.
func Moved(before, after agent.Agent) bool { return before.Fleet != after.Fleet }
