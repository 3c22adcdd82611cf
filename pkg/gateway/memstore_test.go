package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// memAgents is an in-memory Agents with the semantics the gateway expects of
// the DynamoDB store: RecordAgent keeps the desired state, MarkOffline yields
// to a newer connection, and the lagging index lists agents whose desired
// hash or package offer is not reported yet.
type memAgents struct {
	mu       sync.Mutex
	byID     map[string]agent.Agent
	writes   int // RecordAgent and MarkOffline calls that stored something
	offlines int
	acks     []string
	panicOn  string // RecordAgent panics for this agent id
}

var (
	_ Agents      = (*memAgents)(nil)
	_ PushAcker   = (*memAgents)(nil)
	_ BatchReader = (*memAgents)(nil)
)

func newMemAgents() *memAgents { return &memAgents{byID: make(map[string]agent.Agent)} }

func (m *memAgents) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.byID[id]
	return a, ok, nil
}

func (m *memAgents) AgentsConsistent(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]agent.Agent, len(ids))
	for _, id := range ids {
		if a, ok := m.byID[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

func (m *memAgents) RecordAgent(_ context.Context, a agent.Agent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.ID == m.panicOn {
		panic("store exploded")
	}
	old := m.byID[a.ID]
	a.Fleet, a.DesiredHash, a.PackageOffer, a.TargetVersion = old.Fleet, old.DesiredHash, old.PackageOffer, old.TargetVersion
	m.byID[a.ID] = a
	m.writes++
	return nil
}

func (m *memAgents) MarkOffline(_ context.Context, id string, connectedAt, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.byID[id]
	if !ok || a.ConnectedAt.After(connectedAt) {
		return nil // a newer connection owns the agent
	}
	a.Online, a.LastSeen = false, at
	m.byID[id] = a
	m.writes++
	m.offlines++
	return nil
}

func (m *memAgents) LaggingAgents(_ context.Context, token string, limit int) ([]agent.Agent, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, a := range m.byID {
		if m.lagging(a) && id > token {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var page []agent.Agent
	for _, id := range ids {
		if len(page) == limit {
			return page, page[len(page)-1].ID, nil
		}
		page = append(page, m.byID[id])
	}
	return page, "", nil
}

// lagging is pkg/store's rule: a desired hash or offer neither delivered
// (acknowledged by the gateway) nor already what the agent reports.
func (m *memAgents) lagging(a agent.Agent) bool {
	return (a.DesiredHash != "" && !slices.Contains(m.acks, a.ID+" "+a.DesiredHash+" ") && a.DesiredHash != a.RemoteConfig.Hash) ||
		(a.PackageOffer != "" && !slices.Contains(m.acks, a.ID+"  "+a.PackageOffer) && NormalizeVersion(a.PackageOffer) != a.ServiceVersion)
}

func (m *memAgents) ackList() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.acks)
}

func (m *memAgents) AckPush(_ context.Context, id, hash, offer string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acks = append(m.acks, fmt.Sprintf("%s %s %s", id, hash, offer))
	return nil
}

// setDesired is the engine's side: a desired hash and a package offer.
func (m *memAgents) setDesired(id, hash, offer string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.byID[id]
	a.ID, a.DesiredHash, a.PackageOffer = id, hash, offer
	m.byID[id] = a
}

func (m *memAgents) get(id string) agent.Agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

func (m *memAgents) writeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

func (m *memAgents) offlineCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offlines
}

// memConfigs serves configurations by hash.
type memConfigs map[string]string

func (c memConfigs) ConfigByHash(_ context.Context, hash string) ([]byte, string, error) {
	body, ok := c[hash]
	if !ok {
		return nil, "", fmt.Errorf("no configuration %s", hash)
	}
	return []byte(body), "text/yaml", nil
}

// clock is a fake clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
