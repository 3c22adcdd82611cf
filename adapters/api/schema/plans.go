package schema

import (
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/predict"
)

// PlanRequest is the schema PlanRequest: the fleet and kind to plan, and
// optionally a proposed revision (else the applied one) and, for kind
// version, a proposed target version (else the fleet's effective target).
type PlanRequest struct {
	Fleet    string           `json:"fleet"`
	Kind     policy.Kind      `json:"kind"`
	Revision *RevisionRequest `json:"revision,omitempty"`
	Version  string           `json:"version,omitempty"`
}

// RevisionRequest is the schema RevisionRequest: a revision's commit and
// its files by path.
type RevisionRequest struct {
	Commit string            `json:"commit"`
	Files  map[string]string `json:"files"`
}

// The plan and the prediction are core/predict's values.
type (
	Plan          = predict.Plan
	Prediction    = predict.Prediction
	Tolerance     = predict.Tolerance
	When          = predict.When
	WavePlan      = predict.WavePlan
	StagePlan     = predict.Stage
	Excluded      = predict.Excluded
	PlanApproval  = predict.Approval
	ApplySeconds  = predict.ApplySeconds
	PlanPolicyRef = predict.PolicyRef
)
