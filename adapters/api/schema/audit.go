package schema

import "time"

// AuditEntry is the schema AuditEntry.
type AuditEntry struct {
	ID               string         `json:"id"`
	At               time.Time      `json:"at"`
	Actor            string         `json:"actor"`
	ActorDisplayName string         `json:"actorDisplayName"`
	Action           string         `json:"action"`
	TargetType       string         `json:"targetType"`
	TargetID         string         `json:"targetId"`
	Result           string         `json:"result"`
	Details          map[string]any `json:"details,omitempty"`
}
