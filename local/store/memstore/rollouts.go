package memstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

func (m *Store) GetRollout(_ context.Context, id string) (rollout.Rollout, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("GetRollout"); err != nil {
		return rollout.Rollout{}, err
	}
	if err := keyError(id); err != nil {
		return rollout.Rollout{}, err
	}
	r, ok := m.Rollouts[id]
	if !ok {
		return r, fmt.Errorf("rollout %s: %w", id, enginetask.ErrRolloutNotFound)
	}
	return cloneRollout(r), nil
}

func (m *Store) LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error) {
	r, err := m.GetRollout(ctx, id)
	if err != nil {
		return r, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return r, sortedTargets(m.Targets[id]), nil
}

func sortedTargets(ts []rollout.Target) []rollout.Target {
	out := append([]rollout.Target(nil), ts...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Wave != out[j].Wave {
			return out[i].Wave < out[j].Wave
		}
		return out[i].AgentID < out[j].AgentID
	})
	return out
}

func cloneRollout(r rollout.Rollout) rollout.Rollout { return clone(r) }

func (m *Store) RolloutsPage(_ context.Context, fleetName string, k policy.Kind, token string, limit int) (page.Page[rollout.Rollout], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("RolloutsPage"); err != nil {
		return page.Page[rollout.Rollout]{}, err
	}
	if fleetName != "" {
		if err := keyError(fleetName); err != nil {
			return page.Page[rollout.Rollout]{}, err
		}
	}
	var all []rollout.Rollout
	for _, r := range m.Rollouts {
		if (fleetName == "" || r.Fleet == fleetName) && (k == "" || r.Kind == k) {
			all = append(all, cloneRollout(r))
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID > all[j].ID
	})
	return pageOf(all, token, limit)
}

func (m *Store) TargetsPage(_ context.Context, id string, wave int, token string, limit int) (page.Page[rollout.Target], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(id); err != nil {
		return page.Page[rollout.Target]{}, err
	}
	var ts []rollout.Target
	for _, t := range sortedTargets(m.Targets[id]) {
		if wave == rollout.AllWaves || t.Wave == wave {
			ts = append(ts, t)
		}
	}
	return pageOf(ts, token, limit)
}

func (m *Store) ClearTaskToken(_ context.Context, id, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.Rollouts[id]
	if !ok || r.TaskToken != token {
		return nil
	}
	r.TaskToken = ""
	r.Version++
	m.Rollouts[id] = r
	return nil
}

func (m *Store) ParkToken(_ context.Context, id, token string, parkedAs rollout.Status) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.Rollouts[id]
	if r.Status != parkedAs {
		return false, nil
	}
	r.TaskToken = token
	r.Version++
	m.Rollouts[id] = r
	return true, nil
}

func (m *Store) SetExecution(context.Context, string, string, int) error { return nil }

func (m *Store) RecordFailure(context.Context, string, string, time.Time) (rollout.Status, error) {
	return rollout.Failed, nil
}

func (m *Store) SaveEvaluation(_ context.Context, r rollout.Rollout, changed []rollout.Target, events ...notify.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("SaveEvaluation"); err != nil {
		return err
	}
	if m.Rollouts[r.ID].Version != r.Version {
		return rollout.ErrConflict
	}
	for _, t := range changed {
		if cur, ok := m.target(r.ID, t.AgentID); ok && cur.Version != t.Version {
			return rollout.ErrConflict
		}
	}
	for _, t := range changed {
		t.Version++
		m.putTarget(t)
	}
	r.Version++
	m.Rollouts[r.ID] = cloneRollout(r)
	m.events.Append(r.Version, events)
	return nil
}

func (m *Store) EventsPage(_ context.Context, q notify.Query) (notify.Page, error) {
	p, err := m.events.Page(q)
	if errors.Is(err, notify.ErrBadCursor) {
		err = fmt.Errorf("%w: %w", page.ErrBadToken, err)
	}
	return p, err
}

func (m *Store) target(rid, aid string) (rollout.Target, bool) {
	for _, t := range m.Targets[rid] {
		if t.AgentID == aid {
			return t, true
		}
	}
	return rollout.Target{}, false
}

func (m *Store) putTarget(t rollout.Target) {
	for i, cur := range m.Targets[t.RolloutID] {
		if cur.AgentID == t.AgentID {
			m.Targets[t.RolloutID][i] = t
			return
		}
	}
	m.Targets[t.RolloutID] = append(m.Targets[t.RolloutID], t)
}

func (m *Store) ActiveRollout(_ context.Context, f string, k policy.Kind) (*planner.Active, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, r := range m.Rollouts {
		if r.Fleet == f && r.Kind == k && r.Status.Active() {
			return &planner.Active{Rollout: cloneRollout(r), Targets: sortedTargets(m.Targets[id])}, nil
		}
	}
	return nil, nil
}

func (m *Store) LastTargets(_ context.Context, ids []string, k policy.Kind) (map[string]planner.LastTarget, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]planner.LastTarget{}
	for id, r := range m.Rollouts {
		if r.Kind != k {
			continue
		}
		for _, t := range m.Targets[id] {
			if prev, ok := out[t.AgentID]; !ok || m.Rollouts[prev.Target.RolloutID].CreatedAt.Before(r.CreatedAt) {
				out[t.AgentID] = planner.LastTarget{Target: t, RolloutStatus: r.Status}
			}
		}
	}
	return out, nil
}

func (m *Store) EndRollout(ctx context.Context, r rollout.Rollout, cancelled []rollout.Target, events ...notify.Event) error {
	return m.SaveEvaluation(ctx, r, cancelled, events...)
}

func (m *Store) AddTargets(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error {
	return m.SaveEvaluation(ctx, r, ts)
}

// CreateRollout stores a new, active rollout and its targets, each at
// version 1, while no other rollout of its fleet and kind is active (the
// store's lock item); otherwise rollout.ErrConflict and nothing is written.
func (m *Store) CreateRollout(_ context.Context, r rollout.Rollout, ts []rollout.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.ID == "" || r.Version != 0 || !r.Status.Active() {
		return fmt.Errorf("create rollout %q: want a new, active rollout", r.ID)
	}
	if _, ok := m.Rollouts[r.ID]; ok {
		return fmt.Errorf("create rollout %s: %w", r.ID, rollout.ErrConflict)
	}
	for _, o := range m.Rollouts {
		if o.Fleet == r.Fleet && o.Kind == r.Kind && o.Status.Active() {
			return fmt.Errorf("create rollout %s: lock#%s#%s: %w", r.ID, r.Fleet, r.Kind, rollout.ErrConflict)
		}
	}
	r.Version = 1
	m.Rollouts[r.ID] = cloneRollout(r)
	stored := make([]rollout.Target, len(ts))
	for i, t := range ts {
		t.Version = 1
		stored[i] = t
	}
	m.Targets[r.ID] = stored
	return nil
}

// Events are the events of every change stored, in the order stored.
func (m *Store) Events() []notify.Event { return m.events.Events() }
