// Package audit is the shape of an audit log entry: who did what to which
// object, with which result and details. Decisions in the core return
// entries; the adapters assign the ID and store them.
package audit

import "time"

// Actions of the version selection (docs/version-selection.md, "Audit").
const (
	ActionVersionSelect      = "fleet.version.select"
	ActionVersionClear       = "fleet.version.clear"
	ActionVersionSuperseded  = "fleet.version.superseded"
	ActionVersionInvalidated = "fleet.version.invalidated"
	ActionVersionRemoved     = "fleet.version.removed"
	ActionRolloutCreate      = "rollout.create"
)

// Results of an entry.
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
)

// ActorGitOps is the actor of everything that Git caused. Other actors are
// references such as user:<uuid> or token:<uuid>.
const ActorGitOps = "gitops"

// TargetFleet is the target type of fleet entries; the target ID is the fleet name.
const TargetFleet = "fleet"

// Entry is one audit log entry. ID is empty until the store assigns one.
type Entry struct {
	ID         string         `json:"id,omitempty"`
	At         time.Time      `json:"at"`
	Actor      string         `json:"actor"`
	Action     string         `json:"action"`
	TargetType string         `json:"targetType"`
	TargetID   string         `json:"targetId"`
	Result     string         `json:"result"`
	Details    map[string]any `json:"details,omitempty"`
}
