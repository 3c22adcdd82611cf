package schema

import "time"

// AgentCredentialReset is the answer of resetAgentCredential.
type AgentCredentialReset struct {
	ID            string    `json:"id"`
	DisplayName   string    `json:"displayName"`
	HadCredential bool      `json:"hadCredential"`
	ResetAt       time.Time `json:"resetAt"`
}
