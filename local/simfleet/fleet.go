package simfleet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// stopTimeout bounds the clean disconnect of one agent.
const stopTimeout = 5 * time.Second

// Fleet is a running simulated fleet. Its methods may be called from any
// goroutine.
type Fleet struct {
	agents     []*agent
	changes    *changes
	cancel     context.CancelFunc
	once       sync.Once
	metrics    *http.Server // with Config.MetricsAddr
	metricsURL string
}

// changes tells waiters that the state of some agent changed, and tells
// watchers (Fleet.Watch) which agent and how.
type changes struct {
	mu       sync.Mutex
	ch       chan struct{}
	watchers map[int]func(AgentState)
	nextID   int
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

// agentChanged tells watchers, then waiters, that a's state changed (a.mu
// not held): a Wait that sees the change knows the watchers were told.
func (c *changes) agentChanged(a *agent) {
	c.tell(a)
	c.notify()
}

// tell calls the watchers with a's state (a.mu not held).
func (c *changes) tell(a *agent) {
	c.mu.Lock()
	if len(c.watchers) == 0 {
		c.mu.Unlock()
		return
	}
	fns := slices.Collect(maps.Values(c.watchers))
	c.mu.Unlock()
	s := a.state()
	for _, fn := range fns {
		fn(s)
	}
}

func (c *changes) watch(fn func(AgentState)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchers == nil {
		c.watchers = map[int]func(AgentState){}
	}
	id := c.nextID
	c.nextID++
	c.watchers[id] = fn
	return func() {
		c.mu.Lock()
		delete(c.watchers, id)
		c.mu.Unlock()
	}
}

func (c *changes) notify() {
	c.mu.Lock()
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// Start starts cfg.N agents; each connects in the background and keeps
// reconnecting until Stop. ctx bounds the simulated work (configurations and
// updates stop when it is done); Stop is still needed to disconnect.
func Start(ctx context.Context, cfg Config) (*Fleet, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if cfg.StateDir != "" {
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{cancel: cancel, changes: newChanges()}
	for n := 1; n <= cfg.N; n++ {
		a := newAgent(cfg, n)
		a.changes = f.changes
		if err := a.restore(); err != nil {
			f.Stop()
			return nil, err
		}
		if err := a.start(ctx); err != nil {
			f.Stop()
			return nil, err
		}
		f.agents = append(f.agents, a)
	}
	logAttrs := []any{"agents", cfg.N, "endpoint", cfg.Endpoint, "version", cfg.StartVersion}
	if cfg.MetricsAddr != "" || cfg.MetricsListener != nil {
		if err := f.serveMetrics(cfg.MetricsAddr, cfg.MetricsListener); err != nil {
			f.Stop()
			return nil, err
		}
		logAttrs = append(logAttrs, "metrics", f.metricsURL)
	}
	cfg.Logger.Info("simulated fleet started", logAttrs...)
	return f, nil
}

// Stop ends the simulated work and disconnects every agent (WebSocket agents
// send AgentDisconnect and a normal close). It waits for all of them; calls
// after the first do nothing.
func (f *Fleet) Stop() error {
	var errs []error
	f.once.Do(func() {
		f.cancel()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, a := range f.agents {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
				defer cancel()
				if err := a.stop(ctx); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if f.metrics != nil {
			errs = append(errs, f.metrics.Close())
		}
	})
	return errors.Join(errs...)
}

// AgentState is what one simulated agent currently reports.
type AgentState struct {
	Number        int    `json:"number"` // 1..N
	InstanceUID   string `json:"instanceUid"`
	HostName      string `json:"hostName"`
	Canary        bool   `json:"canary"`
	Failing       bool   `json:"failing"`
	Connected     bool   `json:"connected"`
	Version       string `json:"version"`                // service.version
	ConfigHash    string `json:"configHash,omitempty"`   // hex, of the last remote configuration
	ConfigStatus  string `json:"configStatus,omitempty"` // APPLYING, APPLIED or FAILED
	Healthy       bool   `json:"healthy"`
	Status        string `json:"status,omitempty"`
	LastError     string `json:"lastError,omitempty"`
	Update        string `json:"update,omitempty"`        // status of the last update attempt
	UpdateVersion string `json:"updateVersion,omitempty"` // its offered version, without v
	Busy          bool   `json:"busy"`                    // applying a configuration or updating
	// ProbeAddress is where its health check answers (Config.HealthCheck).
	ProbeAddress string `json:"probeAddress,omitempty"`
	// ExportsFailing is the share of spans its exporter fails now.
	ExportsFailing float64 `json:"exportsFailing,omitempty"`
}

// SetAttributes changes non-identifying attributes of agent n (1..N) at
// run time, as a host that is relabelled or moved reports them: the agent
// sends its new description at once. An empty value removes nothing; it
// reports the attribute empty.
func (f *Fleet) SetAttributes(n int, attrs map[string]string) error {
	if n < 1 || n > len(f.agents) {
		return fmt.Errorf("no agent %d (agents are 1 to %d)", n, len(f.agents))
	}
	a := f.agents[n-1]
	a.report(func() {
		if a.attrs == nil {
			a.attrs = map[string]string{}
		}
		maps.Copy(a.attrs, attrs)
	}, withDescription)
	return nil
}

// Install updates the collector of the agent whose host.name is host to
// version from outside OpAMP, as a webhook's receiver or an Ansible job
// would: after the work the agent has queued, its supervisor restarts the
// collector into the version (the start-up report, then StatusOK) and
// reports the package installed. It returns at once; an agent that runs
// the version already is left alone.
func (f *Fleet) Install(host, version string) error {
	version = bare(version)
	if version == "" {
		return errors.New("install: no version")
	}
	for _, a := range f.agents {
		if HostName(a.n) != host {
			continue
		}
		a.mu.Lock()
		a.pendingInstall = version
		a.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
		return nil
	}
	return fmt.Errorf("install: no agent has host.name %q", host)
}

// Snapshot returns the state of every agent, in agent order.
func (f *Fleet) Snapshot() []AgentState {
	out := make([]AgentState, 0, len(f.agents))
	for _, a := range f.agents {
		out = append(out, a.state())
	}
	return out
}

// Watch calls fn with an agent's new state after each change of it, on the
// goroutine that changed it (fn must not block), until stop is called. A
// Wait wakes up after changes and snapshots every agent, so when changes
// come faster than its snapshots it sees several at once, later than they
// happened; a watcher gets each change when it happens, at the cost of one
// agent's state.
func (f *Fleet) Watch(fn func(AgentState)) (stop func()) { return f.changes.watch(fn) }

// Wait blocks until cond holds for a snapshot of the fleet, checking again
// whenever an agent's state changes, or until ctx is done.
// Example: f.Wait(ctx, func(s []AgentState) bool { return all connected })
func (f *Fleet) Wait(ctx context.Context, cond func([]AgentState) bool) error {
	for {
		changed := f.changes.next() // before the snapshot, so no change is missed
		if cond(f.Snapshot()) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *agent) state() AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := AgentState{
		Number: a.n, InstanceUID: a.uid.String(), HostName: HostName(a.n),
		Canary: a.cfg.canary(a.n), Failing: a.failing, Connected: a.connected, Version: a.version,
		Healthy: a.health.healthy, Status: a.health.status, LastError: a.health.lastError, Busy: a.busy,
		ProbeAddress: a.attrs[ProbeAttribute], ExportsFailing: a.traffic.failing(),
	}
	if a.remote != nil {
		s.ConfigHash = hex.EncodeToString(a.remote.GetLastRemoteConfigHash())
		s.ConfigStatus = strings.TrimPrefix(a.remote.GetStatus().String(), "RemoteConfigStatuses_")
	}
	if a.update != nil {
		s.Update, s.UpdateVersion = a.update.status, a.update.version
	}
	return s
}
