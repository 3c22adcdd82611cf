// Package gateway is the OpAMP server side of Myriarch as a thin adapter:
// it authenticates agents, translates what they report into agent.Agent
// values and writes them when a fact changed, and sends them what the
// rollouts decided (the remote configuration of their desired hash, the
// package offer of their target version).
//
// A gateway task is stateless but for its connections (keystone 4): several
// tasks run behind a load balancer, each polls the store's lagging index and
// pushes to the agents it holds, and liveness comes from heartbeats
// (lastSeen) so that a task that dies leaves no agent online for ever (see
// EffectiveOnline).
//
// From the wire to agent.Agent (Translate):
//   - ID: the 16-byte instance UID in UUID form; other lengths are dropped.
//   - Attributes: identifying and non-identifying attributes in one map
//     (identifying wins); scalars as strings; a key-value list flattens to
//     dotted keys, so labels reported as a map {"labels": {"env": "prod"}} or
//     as "labels.env" both read labels.env. service.version and
//     ServiceVersion lose a leading v; VersionSince dates a new version.
//   - Health: the top-level component; ReportedAt is the server's receive
//     time of the last report that changed it. The updater's component
//     dev.myriarch.update is found anywhere in the tree: its status and
//     start, the status of its children version and from, and every
//     step:<name> child (status, start, status time, last_error).
//   - RemoteConfig: hash in hex, APPLIED/APPLYING/FAILED ("" for UNSET),
//     error; Since dates a new hash or status.
//   - Package: the collector package (Config.PackageName): status, download
//     percent (rounded, 0..100), error, and the version the status is about
//     (the offered one unless INSTALLED), without a leading v.
//
// What it sends: the remote configuration of DesiredHash when the agent has
// reported no status for it, and a PackagesAvailable offer of PackageOffer
// (URL from Config.DownloadURL, hashes derived from name, version and URL
// so that every task offers the same bytes) when the agent neither runs nor
// reports that version; each once per connection, on (re)connect and from
// the poll of the lagging index.
//
// What it writes: a report is written when a fact other than lastSeen
// changed, or when the written lastSeen is LastSeenEvery old; a closed
// connection is written offline unless the gateway closed it to drain.
package gateway

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// Agents is the agent state the gateway reads and writes.
type Agents interface {
	// GetAgent returns the stored agent; found is false for an unknown id.
	GetAgent(ctx context.Context, id string) (a agent.Agent, found bool, err error)
	// RecordAgent writes what the agent reported (attributes, connection,
	// health, update component, remote config and package status) and its
	// lastSeen. It leaves the desired state (DesiredHash, PackageOffer,
	// TargetVersion) and the fleet as stored: those belong to others.
	RecordAgent(ctx context.Context, a agent.Agent) error
	// MarkOffline marks the agent offline as of at, unless it connected
	// again after connectedAt: a newer connection, perhaps to another task,
	// owns it then.
	MarkOffline(ctx context.Context, id string, connectedAt, at time.Time) error
	// LaggingAgents pages through the agents whose desired state is ahead of
	// what they run: a desired hash or a package offer not yet acknowledged.
	// An empty next token ends the listing.
	LaggingAgents(ctx context.Context, pageToken string, limit int) (page []agent.Agent, next string, err error)
}

// PushAcker is implemented by stores whose lagging index waits for the
// gateway to acknowledge what it sent; the gateway calls it after a push.
type PushAcker interface {
	AckPush(ctx context.Context, id, hash, offer string) error
}

// BatchReader is implemented by stores that read many agents in one call
// with strongly consistent reads; Poll reads the held agents of a lagging
// page again with it before it pushes. Missing agents are absent.
type BatchReader interface {
	AgentsConsistent(ctx context.Context, ids []string) (map[string]agent.Agent, error)
}

// Configs serves rendered configurations by their hash.
type Configs interface {
	ConfigByHash(ctx context.Context, hash string) (body []byte, contentType string, err error)
}

// Config of a gateway task. Zero values take the defaults in brackets.
type Config struct {
	Now    func() time.Time // the clock; required
	Logger *slog.Logger     // [slog.Default()]
	// Tokens are the bearer tokens agents may present; several are valid at
	// once so that a secret can be rotated. At least one is required.
	Tokens []string
	// Heartbeat is the interval the gateway asks agents to report at and
	// the unit of liveness [30 s, opamp-go's default].
	Heartbeat time.Duration
	// OfflineAfter is how many heartbeats of silence make an agent offline [3].
	OfflineAfter int
	// PollInterval is how often the lagging index is read [1 s].
	PollInterval time.Duration
	PollPageSize int // agents per page of the lagging index [500]
	// PackageName is the OpAMP package of the collector ["": the top-level
	// package, as the collector's supervisor names it].
	PackageName string
	// DownloadURL is the template of package URLs; {version} is replaced
	// [DefaultDownloadURL].
	DownloadURL     string
	MaxMessageBytes int // larger messages are dropped [1 MiB]
	// MaxConcurrentMessages bounds the messages handled at once, and so the
	// store calls in flight for them; size the store client's idle
	// connections to it [DefaultMaxConcurrentMessages].
	MaxConcurrentMessages int
	StoreTimeout          time.Duration // per store call [5 s]
}

// DefaultMaxConcurrentMessages is Config.MaxConcurrentMessages unless set:
// enough to keep DynamoDB's ~5–10 ms calls busy at thousands of messages a
// second.
const DefaultMaxConcurrentMessages = 64

func (c Config) withDefaults() (Config, error) {
	if c.Now == nil {
		return c, errors.New("gateway: a clock (Config.Now) is required")
	}
	if len(c.Tokens) == 0 {
		return c, errors.New("gateway: at least one agent token is required")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Heartbeat = orDefault(c.Heartbeat, 30*time.Second)
	c.OfflineAfter = orDefault(c.OfflineAfter, 3)
	c.PollInterval = orDefault(c.PollInterval, time.Second)
	c.PollPageSize = orDefault(c.PollPageSize, 500)
	c.DownloadURL = orDefault(c.DownloadURL, DefaultDownloadURL)
	c.MaxMessageBytes = orDefault(c.MaxMessageBytes, 1<<20)
	c.MaxConcurrentMessages = orDefault(c.MaxConcurrentMessages, DefaultMaxConcurrentMessages)
	c.StoreTimeout = orDefault(c.StoreTimeout, 5*time.Second)
	return c, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Gateway is one gateway task. Its OpAMP callbacks run concurrently for
// different connections and never concurrently for the same one; Run polls
// in its own goroutine.
type Gateway struct {
	cfg           Config
	agents        Agents
	configs       Configs
	log           *slog.Logger
	now           func() time.Time
	lastSeenEvery time.Duration

	tokens   atomic.Pointer[tokenSet]
	sessions registry
	links    linkSet
	cache    configCache
	draining atomic.Bool
	handling chan struct{} // a slot per message being handled (MaxConcurrentMessages)
}

// New builds a gateway task over a store of agents and configurations.
func New(cfg Config, agents Agents, configs Configs) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg, agents: agents, configs: configs, log: cfg.Logger, now: cfg.Now,
		lastSeenEvery: LastSeenEvery(cfg.Heartbeat, cfg.OfflineAfter),
		sessions:      registry{byID: make(map[string]*session)},
		links:         linkSet{open: make(map[*link]struct{}), closed: make(chan struct{}, 1)},
		cache:         configCache{byHash: make(map[string]cachedConfig)},
		handling:      make(chan struct{}, cfg.MaxConcurrentMessages),
	}
	if err := g.SetTokens(cfg.Tokens); err != nil {
		return nil, err
	}
	return g, nil
}

// storeCtx bounds one store call; connection callbacks of opamp-go carry no
// deadline of their own.
func (g *Gateway) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), g.cfg.StoreTimeout)
}

// registry holds the sessions of this task by agent id.
type registry struct {
	mu   sync.RWMutex
	byID map[string]*session
}

func (r *registry) get(id string) *session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byID[id]
}

// put registers s, replacing an older session of the same agent.
func (r *registry) put(s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[s.id] = s
}

// remove unregisters s unless a newer session of its agent replaced it.
func (r *registry) remove(s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID[s.id] == s {
		delete(r.byID, s.id)
	}
}

// plainHTTP are the sessions without a WebSocket (s.conn never changes):
// the sweep's, every poll interval, without a copy of all the others.
func (r *registry) plainHTTP() []*session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*session
	for _, s := range r.byID {
		if s.conn == nil {
			out = append(out, s)
		}
	}
	return out
}

// Len is the number of agents this task holds.
func (g *Gateway) Len() int {
	g.sessions.mu.RLock()
	defer g.sessions.mu.RUnlock()
	return len(g.sessions.byID)
}
