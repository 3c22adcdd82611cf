package api

import (
	"context"
	"encoding/json"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/local/store/memstore"
)

// Both stores serve the API as they are: the DynamoDB store in the cloud
// and the local stack, the in-memory one in the tests.
var (
	_ Store = (*store.Store)(nil)
	_ Store = (*memstore.Store)(nil)
	_ Store = (*memStore)(nil)
)

// memStore is the shared in-memory store with what only the API's tests
// ask of it: which agent listing the API read last, and the state and the
// audit log at a glance.
type memStore struct {
	*memstore.Store
	listed string // under the store's lock
}

func newMemStore() *memStore { return &memStore{Store: memstore.New()} }

func (m *memStore) AgentsPage(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	m.setListed("AgentsPage")
	return m.Store.AgentsPage(ctx, token, limit)
}

func (m *memStore) AgentsOfFleet(ctx context.Context, f, token string, limit int) (page.Page[agent.Agent], error) {
	m.setListed("AgentsOfFleet")
	return m.Store.AgentsOfFleet(ctx, f, token, limit)
}

func (m *memStore) AgentsWithAssignmentError(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error) {
	m.setListed("AgentsWithAssignmentError")
	return m.Store.AgentsWithAssignmentError(ctx, token, limit)
}

func (m *memStore) setListed(source string) {
	m.Lock()
	defer m.Unlock()
	m.listed = source
}

func (m *memStore) lastListed() string {
	m.Lock()
	defer m.Unlock()
	return m.listed
}

// snapshot is the whole state but the audit log, for "bad input changes
// nothing".
func (m *memStore) snapshot() string {
	m.Lock()
	defer m.Unlock()
	b, err := json.Marshal(map[string]any{"revision": m.Revision, "fleets": m.FleetsByName, "policies": m.PoliciesByName,
		"selections": m.Selections, "agents": m.Agents, "rollouts": m.Rollouts, "targets": m.Targets})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (m *memStore) auditLen() int {
	m.Lock()
	defer m.Unlock()
	return len(m.Audit)
}

func (m *memStore) lastAudit() audit.Entry {
	m.Lock()
	defer m.Unlock()
	if len(m.Audit) == 0 {
		return audit.Entry{}
	}
	return m.Audit[len(m.Audit)-1]
}

func (m *memStore) auditEntries() []audit.Entry {
	m.Lock()
	defer m.Unlock()
	return append([]audit.Entry(nil), m.Audit...)
}

// stored is the stored release of key (distribution/version).
func (m *memStore) stored(key string) (releases.Release, bool) {
	m.Lock()
	defer m.Unlock()
	r, ok := m.Releases[key]
	return r, ok
}

// count is the number of stored releases.
func (m *memStore) count() int {
	m.Lock()
	defer m.Unlock()
	return len(m.Releases)
}
