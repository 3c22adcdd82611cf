package memstore

import "context"

// SetCredential marks the agent as holding a credential of its own, as the
// gateway's binding at its first connection leaves it.
func (m *Store) SetCredential(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Creds[id] = true
}

// HasCredential reports whether the agent holds a credential.
func (m *Store) HasCredential(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Creds[id]
}

// RotationRequested reports whether a rotation of the agent's credential
// was asked for.
func (m *Store) RotationRequested(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Rotating[id]
}

// ResetAgentCredential forgets the agent's credential: found is false for
// an unknown agent, had tells whether it had one.
func (m *Store) ResetAgentCredential(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("ResetAgentCredential"); err != nil {
		return false, false, err
	}
	if _, ok := m.Agents[id]; !ok {
		return false, false, nil
	}
	had = m.Creds[id]
	delete(m.Creds, id)
	return true, had, nil
}

// RequestCredentialRotation records the request in Rotating; nothing is
// written for an agent without a credential.
func (m *Store) RequestCredentialRotation(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.Agents[id]; !ok {
		return false, false, nil
	}
	if !m.Creds[id] {
		return true, false, nil
	}
	m.Rotating[id] = true
	return true, true, nil
}
