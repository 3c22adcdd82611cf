package api

import (
	"context"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/selection"
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
	c, err := s.changeCredential(r, p, ActionCredentialReset, s.Store.ResetAgentCredential)
	if err != nil {
		return 0, nil, err
	}
	details := map[string]any{"hadCredential": c.had}
	if c.reason != "" {
		details["reason"] = c.reason
	}
	s.audit(r.Context(), credentialEntry(c.now, p, ActionCredentialReset, c.agent.ID, audit.ResultSuccess, details))
	return http.StatusOK, schema.AgentCredentialReset{ID: c.agent.ID, DisplayName: c.agent.DisplayName(), HadCredential: c.had, ResetAt: c.now.UTC()}, nil
}

// credentialChange is a credential action's change made: the agent, whether
// it had a credential, the reason given, and the action's time.
type credentialChange struct {
	agent  agent.Agent
	had    bool
	reason string
	now    time.Time
}

// changeCredential is what both credential actions begin with: the query
// and the agent's reference checked, the optional reason read (a refused
// body audited as a failure of action), the agent found, and change made
// in the store; an agent deleted meanwhile is a 404.
func (s *server) changeCredential(r *http.Request, p Principal, action string, change func(ctx context.Context, id string) (found, had bool, err error)) (credentialChange, error) {
	c := credentialChange{now: s.Clock()}
	if _, pr := newQuery(r); pr != nil {
		return c, pr
	}
	ref, pr := agentRef(r)
	if pr != nil {
		return c, pr
	}
	if pr := reasonBody(r, &c.reason); pr != nil {
		s.audit(r.Context(), credentialEntry(c.now, p, action, ref, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
		return c, pr
	}
	a, err := s.findAgent(r.Context(), ref)
	if err != nil {
		return c, err
	}
	found, had, err := change(r.Context(), a.ID)
	if err != nil {
		return c, fmt.Errorf("%s of agent %s: %w", action, a.ID, err)
	}
	if !found { // deleted since it was read
		return c, problem(http.StatusNotFound, CodeAgentNotFound, "no agent has the id or display name "+shorten(ref))
	}
	c.agent, c.had = a, had
	return c, nil
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
	c, err := s.changeCredential(r, p, ActionCredentialRotate, s.Store.RequestCredentialRotation)
	if err != nil {
		return 0, nil, err
	}
	if !c.had {
		pr := problem(http.StatusConflict, CodeAgentNoCredential, "agent "+c.agent.ID+" has no credential to rotate: it enrolls with the fleet's enrollment token")
		s.audit(r.Context(), credentialEntry(c.now, p, ActionCredentialRotate, c.agent.ID, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
		return 0, nil, pr
	}
	details := map[string]any{}
	if c.reason != "" {
		details["reason"] = c.reason
	}
	s.audit(r.Context(), credentialEntry(c.now, p, ActionCredentialRotate, c.agent.ID, audit.ResultSuccess, details))
	return http.StatusOK, schema.AgentCredentialRotation{ID: c.agent.ID, DisplayName: c.agent.DisplayName(), RequestedAt: c.now.UTC()}, nil
}
