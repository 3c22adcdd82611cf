package clienttest

import "context"

// SetCredential marks the agent as holding a credential of its own, as the
// gateway's binding at its first connection leaves it.
func (m *Store) SetCredential(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.credsOf == nil {
		m.credsOf = map[string]bool{}
	}
	m.credsOf[id] = true
}

// HasCredential reports whether the agent holds a credential.
func (m *Store) HasCredential(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.credsOf[id]
}

// ResetAgentCredential forgets the agent's credential (api.AgentCredentials).
func (m *Store) ResetAgentCredential(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.agents[id]; !ok {
		return false, false, nil
	}
	had = m.credsOf[id]
	delete(m.credsOf, id)
	return true, had, nil
}

// RequestCredentialRotation asks for a rotation of the agent's credential
// (api.AgentCredentials); RotationRequested tells the request.
func (m *Store) RequestCredentialRotation(_ context.Context, id string) (found, had bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.agents[id]; !ok {
		return false, false, nil
	}
	if !m.credsOf[id] {
		return true, false, nil
	}
	if m.rotating == nil {
		m.rotating = map[string]bool{}
	}
	m.rotating[id] = true
	return true, true, nil
}

// RotationRequested reports whether a rotation of the agent's credential
// was asked for.
func (m *Store) RotationRequested(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rotating[id]
}
