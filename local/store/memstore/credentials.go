package memstore

import (
	"context"
	"errors"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// Credential is what the store keeps of an agent's own credential (the
// store's Credential): digests only. The zero value is an agent with none.
type Credential struct {
	Digest  string    // the current credential's digest
	Next    string    // offered by a rotation, not presented yet
	BoundAt time.Time // when Digest was bound
	Rotate  bool      // an operator asked for a rotation
}

// SetCredential gives the agent a credential of its own, as the gateway's
// binding at its first connection leaves it.
func (m *Store) SetCredential(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Creds[id] = Credential{Digest: "digest-of-" + id}
}

// HasCredential reports whether the agent holds a credential.
func (m *Store) HasCredential(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Creds[id].Digest != ""
}

// RotationRequested reports whether a rotation of the agent's credential
// was asked for and not yet offered.
func (m *Store) RotationRequested(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Creds[id].Rotate
}

// AgentCredential is the agent's credential, the offer of a rotation and
// whether one was asked for; an unknown agent has none.
func (m *Store) AgentCredential(_ context.Context, id string) (digest, next string, boundAt time.Time, rotate bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.Creds[id]
	return c.Digest, c.Next, c.BoundAt, c.Rotate, nil
}

// BindCredential binds digest to an agent that has no credential, creating
// an unknown agent; bound is false when it has one (of two first
// connections at once, exactly one binds).
func (m *Store) BindCredential(_ context.Context, id, digest string, at time.Time) (bool, error) {
	if digest == "" {
		return false, errors.New("bind credential: empty digest")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Creds[id].Digest != "" {
		return false, nil
	}
	a, ok := m.Agents[id]
	if !ok {
		a = agent.Agent{ID: id}
	}
	m.Creds[id] = Credential{Digest: digest, BoundAt: at.UTC()}
	m.putAgent(a)
	return true, nil
}

// OfferCredential records next as the credential a rotation offers while
// the agent's credential is still digest, and answers the rotation's
// request; ok is false otherwise.
func (m *Store) OfferCredential(_ context.Context, id, digest, next string) (bool, error) {
	return m.changeCredential(id, func(c *Credential) bool {
		if digest == "" || c.Digest != digest || next == "" {
			return false
		}
		c.Next, c.Rotate = next, false
		return true
	}), nil
}

// PromoteCredential makes the offered next the agent's credential; ok is
// false when next is not (or no longer) the offered one.
func (m *Store) PromoteCredential(_ context.Context, id, next string, at time.Time) (bool, error) {
	return m.changeCredential(id, func(c *Credential) bool {
		if next == "" || c.Next != next {
			return false
		}
		*c = Credential{Digest: next, BoundAt: at.UTC()}
		return true
	}), nil
}

// ResetAgentCredential forgets the agent's credential and any offer or
// request: found is false for an unknown agent, had tells whether it had
// one.
func (m *Store) ResetAgentCredential(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("ResetAgentCredential"); err != nil {
		return false, false, err
	}
	if _, found = m.Agents[id]; !found {
		return false, false, nil
	}
	had = m.Creds[id].Digest != ""
	m.changeCredentialLocked(id, func(c *Credential) bool {
		*c = Credential{}
		return had
	})
	return true, had, nil
}

// RequestCredentialRotation asks for a rotation at the agent's next
// connection; nothing is written for an agent without a credential, or
// with a request made already.
func (m *Store) RequestCredentialRotation(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, found = m.Agents[id]; !found {
		return false, false, nil
	}
	had = m.Creds[id].Digest != ""
	m.changeCredentialLocked(id, func(c *Credential) bool {
		if !had || c.Rotate {
			return false
		}
		c.Rotate = true
		return true
	})
	return true, had, nil
}

// changeCredential is the read-modify-write of a known agent's credential:
// change edits it and reports whether anything changed; nothing is written
// otherwise.
func (m *Store) changeCredential(id string, change func(*Credential) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changeCredentialLocked(id, change)
}

// changeCredentialLocked is changeCredential for a caller holding the lock.
func (m *Store) changeCredentialLocked(id string, change func(*Credential) bool) bool {
	a, ok := m.Agents[id]
	if !ok {
		return false
	}
	c := m.Creds[id]
	if !change(&c) {
		return false
	}
	if c == (Credential{}) {
		delete(m.Creds, id)
	} else {
		m.Creds[id] = c
	}
	m.putAgent(a)
	return true
}
