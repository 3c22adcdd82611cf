package api

import (
	"context"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/myriarch/myriarch/pkg/api/schema"
	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/selection"
)

// An agent's own credential (the gateway binds it at the agent's first
// connection, see docs/deploy.md) is reset here when the agent lost it (a
// reinstalled host, a supervisor that does not keep it) or it leaked: the
// agent's next connection with the fleet's enrollment token binds a new one,
// and the old one is refused from the agent's next connection on.

// TargetAgent is the audit target type of agent entries; the target ID is
// the agent's instance UID.
const TargetAgent = "agent"

// ActionCredentialReset is the audit action of resetCredential.
const ActionCredentialReset = "agent.credential.reset"

// ActionCredentialRotate is the audit action of rotateAgentCredential.
const ActionCredentialRotate = "agent.credential.rotate"

// AgentCredentials resets agents' credentials and asks for their rotation:
// found is false for an unknown agent, had tells whether it had a
// credential.
type AgentCredentials interface {
	ResetAgentCredential(ctx context.Context, id string) (found, had bool, err error)
	// RequestCredentialRotation has the gateway offer the agent a new
	// credential at its next connection; the current one stays valid until
	// the agent presents the new one. Nothing is written when !had.
	RequestCredentialRotation(ctx context.Context, id string) (found, had bool, err error)
}

// resetAgentCredential forgets the agent's credential, audited as
// agent.credential.reset: a success, or a failure for a refused body (an
// unknown agent names nothing to audit, as an unknown rollout).
func (s *server) resetAgentCredential(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ref, pr := agentRef(r)
	if pr != nil {
		return 0, nil, pr
	}
	now := s.Clock()
	var body struct{ Reason string }
	if pr := reasonBody(r, &body.Reason); pr != nil {
		s.audit(r.Context(), credentialEntry(now, p, ActionCredentialReset, ref, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
		return 0, nil, pr
	}
	a, err := s.findAgent(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	found, had, err := s.Store.ResetAgentCredential(r.Context(), a.ID)
	if err != nil {
		return 0, nil, fmt.Errorf("reset the credential of agent %s: %w", a.ID, err)
	}
	if !found { // deleted since it was read
		return 0, nil, problem(http.StatusNotFound, CodeAgentNotFound, "no agent has the id or display name "+shorten(ref))
	}
	details := map[string]any{"hadCredential": had}
	if body.Reason != "" {
		details["reason"] = body.Reason
	}
	s.audit(r.Context(), credentialEntry(now, p, ActionCredentialReset, a.ID, audit.ResultSuccess, details))
	return http.StatusOK, schema.AgentCredentialReset{ID: a.ID, DisplayName: a.DisplayName(), HadCredential: had, ResetAt: now.UTC()}, nil
}

// reasonBody decodes the optional body {reason} of the credential actions.
func reasonBody(r *http.Request, reason *string) *Problem {
	var body struct {
		Reason string `json:"reason"`
	}
	pr := decodeBody(r, &body, MaxBodyBytes, true)
	if pr == nil && utf8.RuneCountInString(body.Reason) > selection.MaxReasonChars {
		pr = badRequest("reason is longer than %d characters", selection.MaxReasonChars)
	}
	*reason = body.Reason
	return pr
}

func credentialEntry(now time.Time, p Principal, action, id, result string, details map[string]any) audit.Entry {
	return audit.Entry{At: now.UTC(), Actor: p.Actor, Action: action, TargetType: TargetAgent,
		TargetID: clip(id, MaxAgentRefLength), Result: result, Details: details}
}

// rotateAgentCredential asks for a rotation of the agent's credential,
// audited as agent.credential.rotate: a success, or a failure for a refused
// body or an agent without a credential (409 agent_no_credential: there is
// nothing to rotate, and answering 200 would let an operator believe an
// unenrolled agent now has a fresh credential).
func (s *server) rotateAgentCredential(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ref, pr := agentRef(r)
	if pr != nil {
		return 0, nil, pr
	}
	now := s.Clock()
	var reason string
	failed := func(id string, pr *Problem) (int, any, error) {
		s.audit(r.Context(), credentialEntry(now, p, ActionCredentialRotate, id, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
		return 0, nil, pr
	}
	if pr := reasonBody(r, &reason); pr != nil {
		return failed(ref, pr)
	}
	a, err := s.findAgent(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	found, had, err := s.Store.RequestCredentialRotation(r.Context(), a.ID)
	if err != nil {
		return 0, nil, fmt.Errorf("request the rotation of the credential of agent %s: %w", a.ID, err)
	}
	if !found { // deleted since it was read
		return 0, nil, problem(http.StatusNotFound, CodeAgentNotFound, "no agent has the id or display name "+shorten(ref))
	}
	if !had {
		return failed(a.ID, problem(http.StatusConflict, CodeAgentNoCredential,
			"agent "+a.ID+" has no credential to rotate: it enrolls with the fleet's enrollment token"))
	}
	details := map[string]any{}
	if reason != "" {
		details["reason"] = reason
	}
	s.audit(r.Context(), credentialEntry(now, p, ActionCredentialRotate, a.ID, audit.ResultSuccess, details))
	return http.StatusOK, schema.AgentCredentialRotation{ID: a.ID, DisplayName: a.DisplayName(), RequestedAt: now.UTC()}, nil
}
