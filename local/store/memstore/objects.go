package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

func (m *Store) CurrentRevision(context.Context) (*revision.Pointer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Revision == nil {
		return nil, nil
	}
	c := *m.Revision
	return &c, nil
}

func (m *Store) PutRevision(_ context.Context, rev revision.Revision, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("PutRevision"); err != nil {
		return err
	}
	var counter int64
	if m.Revision != nil {
		counter = m.Revision.Version
	}
	m.Revision = &revision.Pointer{Commit: rev.Commit, AppliedAt: at, Version: counter + 1}
	m.Sweep = assignment.Sweep{Rev: counter + 1}
	m.FleetsByName, m.PoliciesByName = map[string]fleet.Fleet{}, map[string]policy.Policy{}
	for _, f := range rev.Fleets {
		m.FleetsByName[f.Name] = f
	}
	for _, p := range rev.Policies {
		m.PoliciesByName[p.Name] = p
	}
	m.Executors = map[string]executorobject.Object{}
	for _, o := range rev.Executors {
		m.Executors[o.Name] = o
	}
	return nil
}

func (m *Store) Fleet(_ context.Context, name string) (*fleet.Fleet, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("Fleet"); err != nil {
		return nil, "", err
	}
	if err := keyError(name); err != nil {
		return nil, "", err
	}
	f, ok := m.FleetsByName[name]
	if !ok {
		return nil, m.commit(), nil
	}
	return &f, m.commit(), nil
}

func (m *Store) commit() string {
	if m.Revision == nil {
		return ""
	}
	return m.Revision.Commit
}

func (m *Store) Fleets(context.Context) ([]fleet.Fleet, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []fleet.Fleet
	for _, f := range m.FleetsByName {
		out = append(out, f)
	}
	return out, m.commit(), nil
}

func (m *Store) Policies(context.Context) (map[string]policy.Policy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]policy.Policy{}
	for k, v := range m.PoliciesByName {
		out[k] = v
	}
	return out, nil
}

func (m *Store) ExecutorObjects(context.Context) (map[string]executorobject.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.Executors), nil
}

func (m *Store) Selection(_ context.Context, f string) (*selection.Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(f); err != nil {
		return nil, err
	}
	if s, ok := m.Selections[f]; ok {
		return &s, nil
	}
	return nil, nil
}

func (m *Store) SaveSelection(_ context.Context, f string, s *selection.Selection, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("SaveSelection"); err != nil {
		return err
	}
	cur, ok := m.Selections[f]
	switch {
	case s == nil && ok && cur.Revision != prev:
		return rollout.ErrConflict
	case s == nil:
		delete(m.Selections, f)
		return nil
	case ok && cur.Revision != prev, !ok && prev != 0:
		return rollout.ErrConflict
	}
	c := *s
	c.Fleet = f
	m.Selections[f] = c
	return nil
}

// --- audit

func (m *Store) AppendAudit(_ context.Context, es []audit.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		m.auditSeq++
		if e.ID == "" {
			e.ID = fmt.Sprintf("a%04d", m.auditSeq)
		}
		// Stored as JSON, as DynamoDB does: details come back as JSON values.
		b, _ := json.Marshal(e)
		var c audit.Entry
		_ = json.Unmarshal(b, &c)
		m.Audit = append(m.Audit, c)
	}
	return nil
}

func (m *Store) AuditOf(_ context.Context, typ, id, token string, limit int) (page.Page[audit.Entry], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(typ + "#" + id); err != nil { // the store's key of an object's entries
		return page.Page[audit.Entry]{}, err
	}
	var out []audit.Entry
	for i := len(m.Audit) - 1; i >= 0; i-- {
		if e := m.Audit[i]; e.TargetType == typ && e.TargetID == id {
			out = append(out, e)
		}
	}
	return pageOf(out, token, limit)
}
