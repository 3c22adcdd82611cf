package api

import (
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// In the cloud the api Lambda asks the planner Lambda to plan a fleet now
// (Lambda Invoke, synchronous): a PlanRequest in, a PlanReply out. A
// planner.Decision does not cross that boundary; the reply carries what
// the API reports of it, and Decision rebuilds just that.

// PlanRequest is the payload of a synchronous planner invocation.
type PlanRequest struct {
	Fleet string      `json:"fleet"`
	Kind  policy.Kind `json:"kind"`
}

// PlanReply is the planner function's answer to a PlanRequest.
type PlanReply struct {
	Target           string `json:"target,omitempty"`
	CreatedRolloutID string `json:"createdRolloutId,omitempty"`
	CreatedTargets   int    `json:"createdTargets,omitempty"`
	UpdatedRolloutID string `json:"updatedRolloutId,omitempty"`
	EndedRolloutID   string `json:"endedRolloutId,omitempty"`
	Stragglers       int    `json:"stragglers,omitempty"`
	Note             string `json:"note,omitempty"`
}

// ReplyOf is the reply of a decision (the planner function's side).
func ReplyOf(d planner.Decision) PlanReply {
	r := PlanReply{Target: d.Target, Stragglers: len(d.Stragglers), Note: d.Note}
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

// Decision rebuilds the parts of the decision that the API reports (the
// api's side): ids, counts, the target and the note.
func (r PlanReply) Decision() planner.Decision {
	d := planner.Decision{Target: r.Target, Note: r.Note, Stragglers: make([]rollout.Target, r.Stragglers)}
	if r.CreatedRolloutID != "" {
		d.Created = &planner.Active{Rollout: rollout.Rollout{ID: r.CreatedRolloutID}, Targets: make([]rollout.Target, r.CreatedTargets)}
	}
	if r.UpdatedRolloutID != "" {
		d.Updated = &rollout.Rollout{ID: r.UpdatedRolloutID}
	}
	if r.EndedRolloutID != "" {
		d.Ended = &planner.Ended{Rollout: rollout.Rollout{ID: r.EndedRolloutID}}
	}
	return d
}
