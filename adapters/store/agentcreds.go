package store

import (
	"context"
	"errors"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// An agent's own credential lives on its item, beside what it reports, so
// that the gateway needs no access beyond the agent's item and every write
// of the item (each a PutItem of the whole record) carries it along. Only
// digests are stored: the hex SHA-256 of the credential, which has 256 bits
// of entropy, so that no salt is needed and a reader of the table learns
// nothing it could present.
const (
	attrCred     = "cred"     // digest of the credential the agent holds
	attrCredNext = "credNext" // digest of a credential offered by a rotation, not used yet
	attrCredAt   = "credAt"   // when cred was bound, sortable UTC text
	// An operator asked for a rotation: the agent's next connection with
	// cred is offered a new one whatever cred's age. Present or absent.
	attrCredRotate = "credRotate"
)

// Credential is what the store keeps of an agent's credential. The zero
// value is an agent with none: it enrolls with the fleet's token.
type Credential struct {
	Digest  string    // current credential
	Next    string    // offered by a rotation; becomes Digest when the agent first presents it
	BoundAt time.Time // when Digest was bound
	// Rotate is an operator's request for a rotation at the agent's next
	// connection; the offer clears it (Digest stays valid until Next is used).
	Rotate bool
}

// Bound reports whether the agent has a credential.
func (c Credential) Bound() bool { return c.Digest != "" }

// into puts the credential into an agent's packed document.
func (c Credential) into(doc *agentDocument) {
	if c.Digest == "" {
		return
	}
	doc.Cred, doc.CredNext, doc.CredRotate = c.Digest, c.Next, c.Rotate
	if !c.BoundAt.IsZero() {
		at := c.BoundAt.UTC()
		doc.CredAt = &at
	}
}

func credentialOf(doc agentDocument) Credential {
	c := Credential{Digest: doc.Cred, Next: doc.CredNext, Rotate: doc.CredRotate}
	if doc.CredAt != nil {
		c.BoundAt = *doc.CredAt
	}
	return c
}

// decodeCredential reads the credential of an item written before schema
// version 3, which kept it in attributes of its own.
func decodeCredential(d *decoder) Credential {
	c := Credential{Digest: d.optStr(attrCred), Next: d.optStr(attrCredNext), Rotate: d.optStr(attrCredRotate) != ""}
	if at := d.optStr(attrCredAt); at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			d.fail("attribute %q is %q, want a time", attrCredAt, at)
		}
		c.BoundAt = t
	}
	return c
}

// AgentCredential reads the credential of an agent and whether an operator
// asked for its rotation (strongly consistent: a binding made a moment ago
// by another gateway task must be seen). An unknown agent has none.
func (s *Store) AgentCredential(ctx context.Context, id string) (digest, next string, boundAt time.Time, rotate bool, err error) {
	r, err := s.GetAgentRecord(ctx, id)
	if err != nil || r == nil {
		return "", "", time.Time{}, false, err
	}
	c := r.Credential
	return c.Digest, c.Next, c.BoundAt, c.Rotate, nil
}

// BindCredential binds digest to an agent that has no credential, creating
// the agent when it is unknown; bound is false when the agent has one
// already. Both writes are conditional (the item absent, or its counter as
// read), so of two first connections of one agent, on two gateway tasks at
// once, exactly one binds.
func (s *Store) BindCredential(ctx context.Context, id, digest string, at time.Time) (bound bool, err error) {
	if digest == "" {
		return false, errors.New("bind credential: empty digest")
	}
	c := Credential{Digest: digest, BoundAt: at.UTC()}
	cur, err := s.GetAgentRecord(ctx, id)
	if err != nil {
		return false, err
	}
	if cur == nil {
		// A new agent, assigned to its fleet once it has reported.
		err := s.putAgent(ctx, AgentRecord{Agent: agent.Agent{ID: id}, AssignPending: true, Credential: c})
		if !errors.Is(err, rollout.ErrConflict) {
			return err == nil, err
		}
		// Created meanwhile: decided below on what was written.
	}
	return s.updateAgent(ctx, id, cur, func(r *AgentRecord) bool {
		if r.Credential.Bound() {
			return false
		}
		r.Credential = c
		return true
	})
}

// OfferCredential records next as the credential a rotation offers, while
// the agent's credential is still digest; ok is false otherwise. It
// replaces an earlier offer the agent never used (lost with its
// connection): only the holder of the current credential gets here.
func (s *Store) OfferCredential(ctx context.Context, id, digest, next string) (ok bool, err error) {
	return s.updateAgent(ctx, id, nil, func(r *AgentRecord) bool {
		if digest == "" || r.Credential.Digest != digest || next == "" {
			return false
		}
		r.Credential.Next = next
		r.Credential.Rotate = false // the request is answered by this offer
		return true
	})
}

// PromoteCredential makes the offered credential next the agent's own,
// when the agent first presents it: the one it replaces is no longer
// accepted. ok is false when next is not (or no longer) the offered one.
func (s *Store) PromoteCredential(ctx context.Context, id, next string, at time.Time) (ok bool, err error) {
	return s.updateAgent(ctx, id, nil, func(r *AgentRecord) bool {
		if next == "" || r.Credential.Next != next {
			return false
		}
		r.Credential = Credential{Digest: next, BoundAt: at.UTC()}
		return true
	})
}

// ResetAgentCredential forgets the agent's credential (and an offered
// one), so that its next connection with the fleet's enrollment token binds
// a new one. found is false for an unknown agent; had tells whether it had a
// credential.
func (s *Store) ResetAgentCredential(ctx context.Context, id string) (found, had bool, err error) {
	cur, err := s.GetAgentRecord(ctx, id)
	if err != nil || cur == nil {
		return false, false, err
	}
	_, err = s.updateAgent(ctx, id, cur, func(r *AgentRecord) bool {
		had = r.Credential.Bound()
		r.Credential = Credential{}
		return had
	})
	return true, had, err
}

// RequestCredentialRotation asks for a rotation of the agent's credential:
// the gateway offers a new one at the agent's next connection with its
// current one, which stays valid until the agent presents the new one (a
// leak is cut off by ResetAgentCredential instead). found is false for an
// unknown agent; had tells whether it has a credential to rotate (nothing
// is written without one). A request made already is left as it is.
func (s *Store) RequestCredentialRotation(ctx context.Context, id string) (found, had bool, err error) {
	cur, err := s.GetAgentRecord(ctx, id)
	if err != nil || cur == nil {
		return false, false, err
	}
	_, err = s.updateAgent(ctx, id, cur, func(r *AgentRecord) bool {
		had = r.Credential.Bound()
		if !had || r.Credential.Rotate {
			return false
		}
		r.Credential.Rotate = true
		return true
	})
	return true, had, err
}
