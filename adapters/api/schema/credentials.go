package schema

import "time"

// AgentCredentialReset is the answer of resetAgentCredential.
type AgentCredentialReset struct {
	ID            string    `json:"id"`
	DisplayName   string    `json:"displayName"`
	HadCredential bool      `json:"hadCredential"`
	ResetAt       time.Time `json:"resetAt"`
}

// AgentCredentialRotation is the answer of rotateAgentCredential.
type AgentCredentialRotation struct {
	ID          string    `json:"id"`
	DisplayName string    `json:"displayName"`
	RequestedAt time.Time `json:"requestedAt"`
}
