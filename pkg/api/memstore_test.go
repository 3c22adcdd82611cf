package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/assignment"
	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/enginetask"
	"github.com/myriarch/myriarch/pkg/executor"
	"github.com/myriarch/myriarch/pkg/executorobject"
	"github.com/myriarch/myriarch/pkg/fleet"
	"github.com/myriarch/myriarch/pkg/notify"
	"github.com/myriarch/myriarch/pkg/notify/notifytest"
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/revision"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selection"
)

// memStore is the in-memory store of the tests with the conditions of the
// DynamoDB store: rollout and target versions, selection revisions, one
// active rollout per fleet and kind. It serves the API, the engine's
// Passer, the planner and the updater executor at once.
type memStore struct {
	mu         sync.Mutex
	revision   *RevisionInfo
	fleets     map[string]fleet.Fleet
	policies   map[string]policy.Policy
	executors  map[string]executorobject.Object
	selections map[string]selection.Selection
	agents     map[string]agent.Agent
	credsOf    map[string]bool // agents with a credential (credentials_test.go)
	rotating   map[string]bool // agents whose credential's rotation was asked for
	// sweep is the assignment sweep PutRevision records, at the
	// revision pointer's counter (revision.Version).
	sweep    assignment.Sweep
	rollouts map[string]rollout.Rollout
	targets  map[string][]rollout.Target
	audit    []audit.Entry
	auditSeq int
	events   notifytest.Feed
	memReleases
	// fail makes the named method return the error.
	fail map[string]error
	// listed is the agent listing the API read last (AgentsPage,
	// AgentsOfFleet, AgentsWithAssignmentError).
	listed string
}

var (
	_ Store             = (*memStore)(nil)
	_ enginetask.Store  = (*memStore)(nil)
	_ planner.Store     = (*memStore)(nil)
	_ executor.Offers   = (*memStore)(nil)
	_ enginetask.Tokens = (*memStore)(nil)
)

func newMemStore() *memStore {
	return &memStore{fleets: map[string]fleet.Fleet{}, policies: map[string]policy.Policy{},
		selections: map[string]selection.Selection{}, agents: map[string]agent.Agent{},
		rollouts: map[string]rollout.Rollout{}, targets: map[string][]rollout.Target{}, fail: map[string]error{}}
}

func (m *memStore) failing(method string) error { return m.fail[method] }

// keyError is DynamoDB's refusal of a key value: an empty string, or one
// over 1,024 bytes (a sort key's limit; a partition key may have 2,048, but
// the store puts ids and names in both). The API must never pass such a
// value on; this store refuses it as DynamoDB does, so that a test sees the
// 500 that would follow.
func keyError(v string) error {
	if v == "" || len(v) > 1024 {
		return fmt.Errorf("ValidationException: a key value of %d bytes", len(v))
	}
	return nil
}

// snapshot is the whole state but the audit log, for "bad input changes
// nothing".
func (m *memStore) snapshot() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := json.Marshal(map[string]any{"revision": m.revision, "fleets": m.fleets, "policies": m.policies,
		"selections": m.selections, "agents": m.agents, "rollouts": m.rollouts, "targets": m.targets})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (m *memStore) auditLen() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.audit)
}

func (m *memStore) lastAudit() audit.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.audit) == 0 {
		return audit.Entry{}
	}
	return m.audit[len(m.audit)-1]
}

func (m *memStore) auditEntries() []audit.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]audit.Entry(nil), m.audit...)
}

// --- rollouts

func (m *memStore) GetRollout(_ context.Context, id string) (rollout.Rollout, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("GetRollout"); err != nil {
		return rollout.Rollout{}, err
	}
	if err := keyError(id); err != nil {
		return rollout.Rollout{}, err
	}
	r, ok := m.rollouts[id]
	if !ok {
		return r, fmt.Errorf("rollout %s: %w", id, enginetask.ErrRolloutNotFound)
	}
	return cloneRollout(r), nil
}

func (m *memStore) LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error) {
	r, err := m.GetRollout(ctx, id)
	if err != nil {
		return r, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return r, sortedTargets(m.targets[id]), nil
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

func cloneRollout(r rollout.Rollout) rollout.Rollout {
	b, _ := json.Marshal(r)
	var c rollout.Rollout
	_ = json.Unmarshal(b, &c)
	return c
}

func (m *memStore) RolloutsPage(_ context.Context, fleetName string, k policy.Kind, token string, limit int) (Page[rollout.Rollout], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("RolloutsPage"); err != nil {
		return Page[rollout.Rollout]{}, err
	}
	if fleetName != "" {
		if err := keyError(fleetName); err != nil {
			return Page[rollout.Rollout]{}, err
		}
	}
	var all []rollout.Rollout
	for _, r := range m.rollouts {
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

func (m *memStore) TargetsPage(_ context.Context, id string, wave int, token string, limit int) (Page[rollout.Target], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(id); err != nil {
		return Page[rollout.Target]{}, err
	}
	var ts []rollout.Target
	for _, t := range sortedTargets(m.targets[id]) {
		if wave == AllWaves || t.Wave == wave {
			ts = append(ts, t)
		}
	}
	return pageOf(ts, token, limit)
}

// pageOf pages a list by offset, as the store pages by key.
func pageOf[T any](all []T, token string, limit int) (Page[T], error) {
	from := 0
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			return Page[T]{}, fmt.Errorf("%w: %q", ErrBadPageToken, token)
		}
		from = n
	}
	p := Page[T]{Items: []T{}}
	for i := from; i < len(all) && i < from+limit; i++ {
		p.Items = append(p.Items, all[i])
	}
	if from+limit < len(all) {
		p.Next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(from + limit)))
	}
	return p, nil
}

func (m *memStore) ClearTaskToken(_ context.Context, id, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rollouts[id]
	if !ok || r.TaskToken != token {
		return nil
	}
	r.TaskToken = ""
	r.Version++
	m.rollouts[id] = r
	return nil
}

func (m *memStore) ParkToken(_ context.Context, id, token string, parkedAs rollout.Status) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rollouts[id]
	if r.Status != parkedAs {
		return false, nil
	}
	r.TaskToken = token
	r.Version++
	m.rollouts[id] = r
	return true, nil
}

func (m *memStore) SetExecution(context.Context, string, string, int) error { return nil }
func (m *memStore) RecordFailure(context.Context, string, string, time.Time) (rollout.Status, error) {
	return rollout.Failed, nil
}

// SavePass writes on the rollout's version and each target's version, and
// the events into the feed.
func (m *memStore) SavePass(_ context.Context, r rollout.Rollout, changed []rollout.Target, events ...notify.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("SavePass"); err != nil {
		return err
	}
	if m.rollouts[r.ID].Version != r.Version {
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
	m.rollouts[r.ID] = cloneRollout(r)
	m.events.Append(r.Version, events)
	return nil
}

// EventsPage reads the feed.
func (m *memStore) EventsPage(_ context.Context, q notify.Query) (notify.Page, error) {
	p, err := m.events.Page(q)
	if errors.Is(err, notify.ErrBadCursor) {
		err = fmt.Errorf("%w: %w", ErrBadPageToken, err)
	}
	return p, err
}

func (m *memStore) target(rid, aid string) (rollout.Target, bool) {
	for _, t := range m.targets[rid] {
		if t.AgentID == aid {
			return t, true
		}
	}
	return rollout.Target{}, false
}

func (m *memStore) putTarget(t rollout.Target) {
	for i, cur := range m.targets[t.RolloutID] {
		if cur.AgentID == t.AgentID {
			m.targets[t.RolloutID][i] = t
			return
		}
	}
	m.targets[t.RolloutID] = append(m.targets[t.RolloutID], t)
}

func (m *memStore) ActiveRollout(_ context.Context, f string, k policy.Kind) (*planner.Active, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, r := range m.rollouts {
		if r.Fleet == f && r.Kind == k && r.Status.Active() {
			return &planner.Active{Rollout: cloneRollout(r), Targets: sortedTargets(m.targets[id])}, nil
		}
	}
	return nil, nil
}

func (m *memStore) LastTargets(_ context.Context, ids []string, k policy.Kind) (map[string]planner.LastTarget, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]planner.LastTarget{}
	for id, r := range m.rollouts {
		if r.Kind != k {
			continue
		}
		for _, t := range m.targets[id] {
			if prev, ok := out[t.AgentID]; !ok || m.rollouts[prev.Target.RolloutID].CreatedAt.Before(r.CreatedAt) {
				out[t.AgentID] = planner.LastTarget{Target: t, RolloutStatus: r.Status}
			}
		}
	}
	return out, nil
}

func (m *memStore) EndRollout(ctx context.Context, r rollout.Rollout, cancelled []rollout.Target, events ...notify.Event) error {
	return m.SavePass(ctx, r, cancelled, events...)
}

func (m *memStore) AddTargets(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error {
	return m.SavePass(ctx, r, ts)
}

func (m *memStore) CreateRollout(_ context.Context, r rollout.Rollout, ts []rollout.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.rollouts {
		if o.Fleet == r.Fleet && o.Kind == r.Kind && o.Status.Active() {
			return rollout.ErrConflict
		}
	}
	m.rollouts[r.ID] = cloneRollout(r)
	m.targets[r.ID] = append([]rollout.Target(nil), ts...)
	return nil
}

// --- agents

func (m *memStore) AgentsByID(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("AgentsByID"); err != nil {
		return nil, err
	}
	out := map[string]agent.Agent{}
	for _, id := range ids {
		if a, ok := m.agents[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

func (m *memStore) FleetAgents(_ context.Context, f string) ([]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.agents {
		if a.Fleet == f {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memStore) AllAgents(context.Context) ([]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.agents {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memStore) AssignAgent(_ context.Context, id string, _ int64, decide func(agent.Agent) assignment.Outcome) (before, after agent.Agent, changed bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[id]
	if !ok {
		return before, after, false, nil
	}
	before = a
	changed = decide(a).Apply(&a)
	m.agents[id] = a
	return before, a, changed, nil
}

// --- the inventory: pages in id order, as the store's indexes give them

func (m *memStore) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("GetAgent"); err != nil {
		return agent.Agent{}, false, err
	}
	if err := keyError(id); err != nil {
		return agent.Agent{}, false, err
	}
	a, ok := m.agents[id]
	return a, ok, nil
}

func (m *memStore) AgentsByName(_ context.Context, name string, limit int) ([]agent.Agent, error) {
	if err := keyError(name); err != nil {
		return nil, err
	}
	named := m.agentsWhere(func(a agent.Agent) bool { return a.DisplayName() == name })
	return named[:min(len(named), limit)], nil
}

func (m *memStore) AgentsPage(_ context.Context, token string, limit int) (Page[agent.Agent], error) {
	if err := m.failing("AgentsPage"); err != nil {
		return Page[agent.Agent]{}, err
	}
	m.setListed("AgentsPage")
	return pageOf(m.agentsWhere(func(agent.Agent) bool { return true }), token, limit)
}

func (m *memStore) AgentsOfFleet(_ context.Context, f, token string, limit int) (Page[agent.Agent], error) {
	if err := keyError(f); err != nil {
		return Page[agent.Agent]{}, err
	}
	m.setListed("AgentsOfFleet")
	return pageOf(m.agentsWhere(func(a agent.Agent) bool { return a.Fleet == f }), token, limit)
}

func (m *memStore) AgentsWithAssignmentError(_ context.Context, token string, limit int) (Page[agent.Agent], error) {
	m.setListed("AgentsWithAssignmentError")
	return pageOf(m.agentsWhere(func(a agent.Agent) bool { return a.AssignmentError != "" }), token, limit)
}

func (m *memStore) setListed(source string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.listed = source
}

func (m *memStore) lastListed() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listed
}

// agentsWhere lists the agents that keep, by id.
func (m *memStore) agentsWhere(keep func(agent.Agent) bool) []agent.Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.Agent
	for _, a := range m.agents {
		if keep(a) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (m *memStore) SetDesiredHash(_ context.Context, ids []string, h string) error {
	return m.updateAgents(ids, func(a *agent.Agent) { a.DesiredHash = h })
}

func (m *memStore) SetAgentTargetVersions(_ context.Context, vs map[string]string) error {
	for id, v := range vs {
		if err := m.updateAgents([]string{id}, func(a *agent.Agent) { a.TargetVersion = v }); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) SetPackageOffer(_ context.Context, id, v string) error {
	return m.updateAgents([]string{id}, func(a *agent.Agent) { a.PackageOffer = v })
}

func (m *memStore) updateAgents(ids []string, change func(*agent.Agent)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if a, ok := m.agents[id]; ok {
			change(&a)
			m.agents[id] = a
		}
	}
	return nil
}

// --- revision, fleets, policies, selections

func (m *memStore) CurrentRevision(context.Context) (*RevisionInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.revision == nil {
		return nil, nil
	}
	c := *m.revision
	return &c, nil
}

func (m *memStore) PutRevision(_ context.Context, rev revision.Revision, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("PutRevision"); err != nil {
		return err
	}
	var counter int64
	if m.revision != nil {
		counter = m.revision.Version
	}
	m.revision = &RevisionInfo{Commit: rev.Commit, AppliedAt: at, Version: counter + 1}
	m.sweep = assignment.Sweep{Rev: counter + 1}
	m.fleets, m.policies = map[string]fleet.Fleet{}, map[string]policy.Policy{}
	for _, f := range rev.Fleets {
		m.fleets[f.Name] = f
	}
	for _, p := range rev.Policies {
		m.policies[p.Name] = p
	}
	m.executors = map[string]executorobject.Object{}
	for _, o := range rev.Executors {
		m.executors[o.Name] = o
	}
	return nil
}

func (m *memStore) Fleet(_ context.Context, name string) (*fleet.Fleet, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("Fleet"); err != nil {
		return nil, "", err
	}
	if err := keyError(name); err != nil {
		return nil, "", err
	}
	f, ok := m.fleets[name]
	if !ok {
		return nil, m.commit(), nil
	}
	return &f, m.commit(), nil
}

func (m *memStore) commit() string {
	if m.revision == nil {
		return ""
	}
	return m.revision.Commit
}

func (m *memStore) Fleets(context.Context) ([]fleet.Fleet, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []fleet.Fleet
	for _, f := range m.fleets {
		out = append(out, f)
	}
	return out, m.commit(), nil
}

func (m *memStore) Policies(context.Context) (map[string]policy.Policy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]policy.Policy{}
	for k, v := range m.policies {
		out[k] = v
	}
	return out, nil
}

func (m *memStore) ExecutorObjects(context.Context) (map[string]executorobject.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.executors), nil
}

func (m *memStore) Selection(_ context.Context, f string) (*selection.Selection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(f); err != nil {
		return nil, err
	}
	if s, ok := m.selections[f]; ok {
		return &s, nil
	}
	return nil, nil
}

func (m *memStore) SaveSelection(_ context.Context, f string, s *selection.Selection, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("SaveSelection"); err != nil {
		return err
	}
	cur, ok := m.selections[f]
	switch {
	case s == nil && ok && cur.Revision != prev:
		return rollout.ErrConflict
	case s == nil:
		delete(m.selections, f)
		return nil
	case ok && cur.Revision != prev, !ok && prev != 0:
		return rollout.ErrConflict
	}
	c := *s
	c.Fleet = f
	m.selections[f] = c
	return nil
}

// --- audit

func (m *memStore) AppendAudit(_ context.Context, es []audit.Entry) error {
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
		m.audit = append(m.audit, c)
	}
	return nil
}

func (m *memStore) AuditPage(_ context.Context, typ, id, token string, limit int) (Page[audit.Entry], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := keyError(typ + "#" + id); err != nil { // the store's key of an object's entries
		return Page[audit.Entry]{}, err
	}
	var out []audit.Entry
	for i := len(m.audit) - 1; i >= 0; i-- {
		if e := m.audit[i]; e.TargetType == typ && e.TargetID == id {
			out = append(out, e)
		}
	}
	return pageOf(out, token, limit)
}

// --- the assignment sweep, as the DynamoDB store keeps it (in id order)

func (m *memStore) AppliedFleets(context.Context) ([]fleet.Fleet, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.revision == nil {
		return nil, 0, nil
	}
	out := make([]fleet.Fleet, 0, len(m.fleets))
	for _, f := range m.fleets {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, m.revision.Version, nil
}

func (m *memStore) PendingAssignments(context.Context) ([]string, error) { return nil, nil }

func (m *memStore) CurrentSweep(context.Context) (assignment.Sweep, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sweep, nil
}

func (m *memStore) AssignPage(_ context.Context, _ int64, cursor string, limit int, decide func(agent.Agent) assignment.Outcome) ([]assignment.Swept, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing("AssignPage"); err != nil {
		return nil, "", err
	}
	ids := make([]string, 0, len(m.agents))
	for id := range m.agents {
		if id > cursor {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	next := ""
	if len(ids) > limit {
		ids, next = ids[:limit], ids[limit-1]
	}
	out := make([]assignment.Swept, 0, len(ids))
	for _, id := range ids {
		a := m.agents[id]
		before := a
		changed := decide(a).Apply(&a)
		m.agents[id] = a
		out = append(out, assignment.Swept{Before: before, After: a, Changed: changed})
	}
	return out, next, nil
}

func (m *memStore) AdvanceSweep(_ context.Context, rev int64, from, to string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sweep.Rev != rev || m.sweep.Done || m.sweep.Cursor != from {
		return false, nil
	}
	m.sweep = assignment.Sweep{Rev: rev, Cursor: to, Done: to == ""}
	return true, nil
}

// LinkedUpdaters is pkg/store's: the updaters that name each collector.
func (m *memStore) LinkedUpdaters(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return agent.LinkUpdaters(slices.Collect(maps.Values(m.agents)), ids), nil
}
