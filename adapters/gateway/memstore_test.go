package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/local/store/memstore"
)

// memAgents is the shared in-memory store (local/store/memstore, held to the
// DynamoDB store's rules by the contract test) as a gateway without
// identity sees it, with the counters and hooks the gateway's tests read.
type memAgents struct {
	gatewayStore // the store without its credentials: identity is off
	store        *memstore.Store

	mu         sync.Mutex
	writes     int      // SaveAgent and DisconnectAgent calls that stored something
	offlines   int      // DisconnectAgent calls that stored something
	acks       []string // every AckPush, in order
	batchReads int      // LoadAgents calls
	loads      int      // LoadAgent calls (LoadAgents' own not counted)
	pages      int      // LaggingAgents calls
	panicOn    string   // SaveAgent panics for this agent id
	// writeTime makes each SaveAgent and AckPush take that long; inFlight
	// counts the calls under way per agent, and overlaps lists the calls
	// that began while another write of the same agent was under way.
	loadGate  chan struct{} // LoadAgent waits for it when set
	writeTime time.Duration
	inFlight  map[string]int
	overlaps  []string
}

// writing marks a write of agent id under way until the returned func.
func (m *memAgents) writing(id, call string) func() {
	m.mu.Lock()
	if m.inFlight == nil {
		m.inFlight = map[string]int{}
	}
	if m.inFlight[id] > 0 {
		m.overlaps = append(m.overlaps, call+" "+id)
	}
	m.inFlight[id]++
	d := m.writeTime
	m.mu.Unlock()
	time.Sleep(d)
	return func() {
		m.mu.Lock()
		m.inFlight[id]--
		m.mu.Unlock()
	}
}

// gatewayStore is what the gateway finds in a store without identity.
type gatewayStore interface {
	Agents
	PushAcker
	BatchReader
	agent.LeaseSource
}

// memCreds is the same store with its credentials: identity is on.
type memCreds struct {
	*memAgents
	Credentials
}

var (
	_ gatewayStore = (*memstore.Store)(nil)
	_ Credentials  = (*memstore.Store)(nil)
	_ gatewayStore = (*memAgents)(nil)
	_ Credentials  = (*memCreds)(nil)
)

func newMemAgents() *memAgents {
	st := memstore.New()
	return &memAgents{gatewayStore: st, store: st}
}

func newMemCreds() *memCreds {
	m := newMemAgents()
	return &memCreds{memAgents: m, Credentials: m.store}
}

// reset is an operator's reset of the agent's credential.
func (m *memCreds) reset(id string) { _, _, _ = m.store.ResetAgentCredential(context.Background(), id) }

// requestRotation is an operator's request for a rotation.
func (m *memCreds) requestRotation(id string) {
	_, _, _ = m.store.RequestCredentialRotation(context.Background(), id)
}

// The counted calls. The shared store has no SaveAgents (BatchSaver): a
// gateway over it writes one agent per call, as these tests expect;
// batch_test.go adds one of its own.

func (m *memAgents) LoadAgents(ctx context.Context, ids []string) (map[string]agent.Agent, map[string]any, error) {
	m.count(&m.batchReads)
	return m.store.LoadAgents(ctx, ids)
}

func (m *memAgents) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	m.count(&m.loads)
	m.mu.Lock()
	gate := m.loadGate
	m.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return m.store.LoadAgent(ctx, id)
}

func (m *memAgents) LaggingAgents(ctx context.Context, token string, limit int) ([]agent.Agent, []any, string, error) {
	m.count(&m.pages)
	return m.store.LaggingAgents(ctx, token, limit)
}

// SaveAgent counts a write when the store returns a new version.
func (m *memAgents) SaveAgent(ctx context.Context, a agent.Agent, v any) (any, error) {
	m.mu.Lock()
	boom := a.ID == m.panicOn
	m.mu.Unlock()
	if boom {
		panic("store exploded")
	}
	defer m.writing(a.ID, "SaveAgent")()
	next, err := m.store.SaveAgent(ctx, a, v)
	if err == nil && next != v {
		m.count(&m.writes)
	}
	return next, err
}

func (m *memAgents) DisconnectAgent(ctx context.Context, a agent.Agent, v any) (any, error) {
	next, err := m.store.DisconnectAgent(ctx, a, v)
	if err == nil && next != v {
		m.count(&m.writes, &m.offlines)
	}
	return next, err
}

func (m *memAgents) AckPush(ctx context.Context, id, hash, offer string) error {
	m.mu.Lock()
	m.acks = append(m.acks, fmt.Sprintf("%s %s %s", id, hash, offer))
	m.mu.Unlock()
	defer m.writing(id, "AckPush")()
	return m.store.AckPush(ctx, id, hash, offer)
}

func (m *memAgents) writesSoFar() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

func (m *memAgents) count(counters ...*int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range counters {
		*c++
	}
}

func (m *memAgents) ackList() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.acks)
}

// setDesired is the engine's side: a desired hash and a package offer, on
// an agent created when unknown.
func (m *memAgents) setDesired(id, hash, offer string) {
	m.store.Lock()
	defer m.store.Unlock()
	a := m.store.Agents[id]
	a.ID, a.DesiredHash, a.PackageOffer = id, hash, offer
	m.store.Agents[id] = a
}

// get is the stored agent, the zero agent when unknown.
func (m *memAgents) get(id string) agent.Agent {
	m.store.Lock()
	defer m.store.Unlock()
	return m.store.Agents[id]
}

// lease is the task's lease as stored.
func (m *memAgents) lease(task string) memstore.Lease {
	m.store.Lock()
	defer m.store.Unlock()
	return m.store.GatewayLeases[task]
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
