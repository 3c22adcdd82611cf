package plannertask

import (
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
)

// In the cloud the api Lambda asks the planner Lambda to plan a fleet now
// (Lambda Invoke, synchronous): a Request in, a Reply out. A
// planner.Decision does not cross that boundary; the Reply carries what
// the callers report of it, counts as counts. The runner in process
// answers with the same Reply, so that the API reads one type either way.
// testdata/ holds the golden JSON of both.

// Request is the payload of a synchronous planner invocation.
type Request struct {
	Fleet string      `json:"fleet"`
	Kind  policy.Kind `json:"kind"`
}

// Reply is what a planner run decided, as its callers report it.
type Reply struct {
	// Target is the version or configuration the fleet heads for.
	Target           string `json:"target,omitempty"`
	CreatedRolloutID string `json:"createdRolloutId,omitempty"`
	// CreatedTargets counts the targets of the created rollout.
	CreatedTargets   int    `json:"createdTargets,omitempty"`
	UpdatedRolloutID string `json:"updatedRolloutId,omitempty"`
	EndedRolloutID   string `json:"endedRolloutId,omitempty"`
	// Stragglers counts the agents left out of the rollout.
	Stragglers int `json:"stragglers,omitempty"`
	// Bootstrapped counts the agents without a desired hash that the run
	// gave the fleet's configuration directly (configuration runs).
	Bootstrapped int    `json:"bootstrapped,omitempty"`
	Note         string `json:"note,omitempty"`
}

// ReplyOf is the reply of a decision.
func ReplyOf(d planner.Decision) Reply {
	r := Reply{Target: d.Target, Stragglers: len(d.Stragglers), Bootstrapped: len(d.Bootstrap), Note: d.Note}
	if d.Created != nil {
		r.CreatedRolloutID, r.CreatedTargets = d.Created.Rollout.ID, len(d.Created.Targets)
	}
	if d.Updated != nil {
		r.UpdatedRolloutID = d.Updated.ID
	}
	if d.Ended != nil {
		r.EndedRolloutID = d.Ended.Rollout.ID
	}
	return r
}
