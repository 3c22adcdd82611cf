package client

import (
	"context"
	"net/http"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// CredentialReset is the schema AgentCredentialReset.
type CredentialReset = schema.AgentCredentialReset

// ResetAgentCredential forgets the own credential of the agent (by instance
// UID or display name), so that its next connection with the fleet's
// enrollment token binds a new one; reason is audited ("" for none).
func (c *Client) ResetAgentCredential(ctx context.Context, idOrName, reason string) (CredentialReset, error) {
	var r CredentialReset
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return r, c.Do(ctx, http.MethodPost, "/api/v1/agents/"+escape(idOrName)+"/actions/reset-credential", nil, body, &r)
}

// CredentialRotation is the schema AgentCredentialRotation.
type CredentialRotation = schema.AgentCredentialRotation

// RotateAgentCredential asks the gateway to offer the agent (by instance UID
// or display name) a new credential at its next connection; the current one
// stays valid until the agent presents the new one. reason is audited (""
// for none).
func (c *Client) RotateAgentCredential(ctx context.Context, idOrName, reason string) (CredentialRotation, error) {
	var r CredentialRotation
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return r, c.Do(ctx, http.MethodPost, "/api/v1/agents/"+escape(idOrName)+"/actions/rotate-credential", nil, body, &r)
}
