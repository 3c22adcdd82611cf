// Package gateway is the OpAMP server side of Myriarch as a thin adapter:
// it authenticates agents, translates what they report into agent.Agent
// values and writes them when a fact changed, and sends them what the
// rollouts decided (the remote configuration of their desired hash, the
// package offer of their target version).
//
// A gateway task is stateless but for its connections (keystone 4): several
// tasks run behind a load balancer, each polls the store's lagging index and
// pushes to the agents it holds. Each task holds a lease in the store,
// renewed every third of the liveness timeout (Heartbeat × OfflineAfterHeartbeats) and
// ended when it drains; an agent record names the task holding its
// connection, and readers count the agent online only while that lease is
// alive (agent.Liveness), so that a task that dies leaves no agent online
// for longer than the timeout. Silence is tracked in memory: a session not
// heard from for the timeout is closed and written offline by the next
// sweep (every SweepEvery, a tenth of the timeout).
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
// the poll of the lagging index. A WebSocket agent that sent no message for
// WSPing is also sent a ping frame, so that the load balancer does not drop
// a connection on which nothing else passes (ping.go).
//
// What it writes: a (re)connection, a report that changed a reported fact,
// and a closed connection (offline, unless the gateway closed it to drain),
// each as one conditional write on the version the session last read or
// wrote; a heartbeat that changes nothing is not written. lastSeen is the
// time of the last stored change. Writes go through a bounded writer
// (StoreConcurrency calls at once) and are retried with backoff until
// stored or the session ends; a message whose write is queued waits for it
// up to WriteWait, which slows a storm of agents down to what the store
// takes.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// Agents is the agent state the gateway reads and writes. The version
// values are the store's (opaque here): what a session last read or wrote,
// so that its next write is one conditional write without a read.
type Agents interface {
	// GetAgent returns the stored agent; found is false for an unknown id.
	GetAgent(ctx context.Context, id string) (a agent.Agent, found bool, err error)
	// LoadAgent is GetAgent with the version of what it read (nil when not
	// found).
	LoadAgent(ctx context.Context, id string) (a agent.Agent, found bool, version any, err error)
	// SaveAgent writes what the agent reported (attributes, connection and
	// task, health, update component, remote config and package status) and
	// its lastSeen over version, and returns the version it wrote. It
	// leaves the desired state (DesiredHash, PackageOffer, TargetVersion)
	// and the fleet as stored: those belong to others.
	SaveAgent(ctx context.Context, a agent.Agent, version any) (any, error)
	// DisconnectAgent writes a (Online false) unless a newer connection
	// owns the agent: another task, or a later connectedAt.
	DisconnectAgent(ctx context.Context, a agent.Agent, version any) (any, error)
	// RenewLease and EndLease write this task's lease (see the store).
	RenewLease(ctx context.Context, task string, started, until time.Time) error
	EndLease(ctx context.Context, task string, started, at time.Time) error
	// LaggingAgents pages through the agents whose desired state is ahead of
	// what they run: a desired hash or a package offer not yet acknowledged.
	// versions is nil, or holds the version of each agent of the page as
	// listed (an OrderedVersion lets a poll take a listed desired state
	// without reading the agent again; a DesiredListing says the page
	// lists the desired state alone). An empty next token ends the
	// listing.
	LaggingAgents(ctx context.Context, pageToken string, limit int) (page []agent.Agent, versions []any, next string, err error)
}

// OrderedVersion is a store's version that tells whether it is a later
// state of its agent than another version of that agent (false for nil or
// a version it does not know). A lagging page may be stale (an index lags
// its table): an entry whose version is not after the one whose desired
// state a session holds has nothing new for it, and one that is after it is
// a state of the agent written since, so it is taken as it is listed.
type OrderedVersion interface {
	After(v any) bool
}

// DesiredListing is the version of a lagging page's agent when the page
// lists the agent's desired state alone (ID, DesiredHash, PackageOffer and
// TargetVersion; store.ListedVersion): the page's agent is then not the
// whole agent. Over is the version that a session's stored version (what
// it last read or wrote) becomes with that desired state, when nothing else
// of the agent was written since it; ok is false otherwise, and the
// session's next write reads the agent first, as after any lost race.
type DesiredListing interface {
	OrderedVersion
	Over(stored any) (version any, ok bool)
}

// PushAcker is implemented by stores whose lagging index waits for the
// gateway to acknowledge what it sent; the gateway calls it after a push.
type PushAcker interface {
	AckPush(ctx context.Context, id, hash, offer string) error
}

// BatchSaver is implemented by stores that write many agents in one call:
// SaveAgent for each (as[i] over vs[i]), with the next version or the error
// of each. When the task's store calls are all in flight, the writes that
// queued meanwhile go together (writer.go).
type BatchSaver interface {
	SaveAgents(ctx context.Context, as []agent.Agent, vs []any) (next []any, errs []error)
}

// BatchReader is implemented by stores that read many agents in one call
// with strongly consistent reads; Poll reads the held agents of a lagging
// page again with it before it pushes. Missing agents are absent from both
// maps; versions are those LoadAgent returns.
type BatchReader interface {
	LoadAgents(ctx context.Context, ids []string) (agents map[string]agent.Agent, versions map[string]any, err error)
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
	// OfflineAfterHeartbeats is how many heartbeats of silence make an
	// agent offline [3]: a count, not a duration (readers' liveness rule,
	// adapters/setup's MYRIARCH_OFFLINE_AFTER, is the duration it comes to).
	OfflineAfterHeartbeats int
	// PollInterval is how often the lagging index is read [1 s].
	PollInterval time.Duration
	PollPageSize int // agents per page of the lagging index [500]
	// PackageName is the OpAMP package of the collector ["": the top-level
	// package, as the collector's supervisor names it].
	PackageName string
	// DownloadURL is the template of package URLs; {version} is replaced
	// [DefaultDownloadURL].
	DownloadURL string
	// PackageChecksumsURL and PackageSignatureURL are the templates of a
	// release's checksums file and of an archive's minisign signature,
	// offered with the archive to a myriarch-updater (PackageSource) ["":
	// none, and an updater refuses the offer].
	PackageChecksumsURL, PackageSignatureURL string
	// MaxMessageBytes: larger messages are dropped [DefaultMaxMessageBytes].
	MaxMessageBytes int
	StoreTimeout    time.Duration // per store call [5 s]
	// Task names this task in agent records and its lease [random].
	Task string
	// StoreConcurrency bounds the agent reads and writes in flight
	// [DefaultStoreConcurrency].
	StoreConcurrency int
	// WriteWait is how long a message waits for its queued write before it
	// is answered anyway (the write goes on) [StoreTimeout].
	WriteWait time.Duration
	// LazyWrite is how long a change that no decision waits for (an
	// APPLYING status, the effective configuration's hash, health staying
	// healthy or in start-up) may wait to be written with the agent's next
	// change [DefaultLazyWrite]; negative writes every change at once.
	LazyWrite time.Duration
	// AckGrace is how long the acknowledgement of a pushed configuration
	// waits for the agent's own report of the hash, which takes it out of
	// the lagging index with a write that happens anyway [5 s].
	AckGrace time.Duration
	// After is the timer of backoffs and waits [time.After].
	After func(time.Duration) <-chan time.Time
	// WSPing is how long a WebSocket connection may carry no message
	// before it is sent a ping frame, so that the load balancer never sees
	// it idle (ping.go) [DefaultWSPing]; negative sends none.
	WSPing time.Duration
	// AfterFunc runs f once after d on a goroutine of its own; the quiet
	// connections' bounds are timed with it (quiet.go) [time.AfterFunc].
	AfterFunc func(d time.Duration, f func()) Timer
	// FirstMessageWait: a WebSocket connection that sends no complete
	// message within it after the upgrade is closed (quiet.go)
	// [DefaultFirstMessageWait].
	FirstMessageWait time.Duration
	// MaxConnsPerSource bounds the open WebSocket connections of one source
	// address; more are refused with 429 (sources.go) [0: no bound, for
	// the local stack and load tests, whose agents share one address].
	MaxConnsPerSource int
	// DecodeSlots bounds the messages over 16 KiB that are read, decoded
	// and handled at once (decodeslots.go) [DefaultDecodeSlots].
	DecodeSlots int
	// SlotWait is how long such a message waits for a slot before it is
	// refused [DefaultSlotWait].
	SlotWait time.Duration
	// Identity holds agents to their own credentials (identity.go).
	Identity IdentityConfig
}

// DefaultLazyWrite is Config.LazyWrite unless set: in a wave the APPLYING
// report is followed by APPLIED within a second or so, and a collector's
// start-up reports by its healthy one.
const DefaultLazyWrite = time.Second

// DefaultStoreConcurrency is Config.StoreConcurrency unless set; size the
// store client's idle connections to it.
const DefaultStoreConcurrency = 64

// DefaultMaxMessageBytes is Config.MaxMessageBytes unless set. An agent
// reports its effective configuration back, which is at least the remote
// configuration a revision may carry (4 MiB, revision.MaxConfigBytes) and a
// supervisor adds its own pieces to it: a smaller bound would drop the
// report that completes the target of a large configuration.
const DefaultMaxMessageBytes = 8 << 20

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
	c.OfflineAfterHeartbeats = orDefault(c.OfflineAfterHeartbeats, 3)
	c.PollInterval = orDefault(c.PollInterval, time.Second)
	c.PollPageSize = orDefault(c.PollPageSize, 500)
	c.DownloadURL = orDefault(c.DownloadURL, DefaultDownloadURL)
	c.MaxMessageBytes = orDefault(c.MaxMessageBytes, DefaultMaxMessageBytes)
	c.StoreTimeout = orDefault(c.StoreTimeout, 5*time.Second)
	c.StoreConcurrency = orDefault(c.StoreConcurrency, DefaultStoreConcurrency)
	c.WriteWait = orDefault(c.WriteWait, c.StoreTimeout)
	c.LazyWrite = orDefault(c.LazyWrite, DefaultLazyWrite)
	c.AckGrace = orDefault(c.AckGrace, 5*time.Second)
	if c.After == nil {
		c.After = time.After
	}
	c.WSPing = orDefault(c.WSPing, DefaultWSPing)
	c.FirstMessageWait = orDefault(c.FirstMessageWait, DefaultFirstMessageWait)
	c.DecodeSlots = orDefault(c.DecodeSlots, DefaultDecodeSlots)
	c.SlotWait = orDefault(c.SlotWait, DefaultSlotWait)
	if c.MaxConnsPerSource < 0 || c.DecodeSlots < 0 || c.FirstMessageWait < 0 || c.SlotWait < 0 {
		return c, errors.New("gateway: MaxConnsPerSource, DecodeSlots, FirstMessageWait and SlotWait cannot be negative")
	}
	if c.AfterFunc == nil {
		c.AfterFunc = afterFunc
	}
	if c.Task == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return c, fmt.Errorf("gateway: task id: %w", err)
		}
		c.Task = "gw-" + hex.EncodeToString(b[:])
	}
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
	cfg     Config
	source  *PackageSource // what an offer to a myriarch-updater carries
	agents  Agents
	configs Configs
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration // of silence: Heartbeat × OfflineAfterHeartbeats
	started time.Time     // names this process in its lease
	slots   chan struct{} // one per agent store call in flight
	writes  writers
	ended   atomic.Bool // the lease was ended: renewals stop

	tokens   atomic.Pointer[tokenSet]
	sessions registry
	links    linkSet
	cache    configCache
	draining atomic.Bool
	flush    chan struct{} // closed when the task drains: deferred writes go at once
	flushed  sync.Once
	handlers handlers
	saves    chan *saveJob // to the batch writers, with a BatchSaver
	// queuedSaves counts the writes waiting for a batch writer.
	queuedSaves   atomic.Int32
	pingsInFlight atomic.Int32 // pings being written (ping.go)
	pingsSent     atomic.Int64 // pings written
	noPings       sync.Once    // logs that a connection is not pinged

	// What the task refused to hold (Stats).
	decodeSlots      *decodeSlots
	sources          sourceLimit
	refusedPerSource atomic.Int64
	tooBig           atomic.Int64
	noDecodeSlot     atomic.Int64
	quietClosed      atomic.Int64
}

// New builds a gateway task over a store of agents and configurations.
func New(cfg Config, agents Agents, configs Configs) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg, agents: agents, configs: configs, log: cfg.Logger, now: cfg.Now,
		timeout:  time.Duration(cfg.OfflineAfterHeartbeats) * cfg.Heartbeat,
		started:  cfg.Now(),
		slots:    make(chan struct{}, cfg.StoreConcurrency),
		sessions: newRegistry(),
		links:    linkSet{open: make(map[*link]struct{}), closed: make(chan struct{}, 1)},
		cache:    configCache{byHash: make(map[string]cachedConfig)},
		handlers: newHandlers(),
		flush:    make(chan struct{}),

		decodeSlots: newDecodeSlots(cfg.DecodeSlots, cfg.SlotWait, cfg.After),
		sources:     sourceLimit{max: cfg.MaxConnsPerSource, now: cfg.Now, sources: make(map[string]*source)},
		source: &PackageSource{URL: cfg.DownloadURL, ChecksumsURL: cfg.PackageChecksumsURL, SignatureURL: cfg.PackageSignatureURL,
			HTTP: &http.Client{Timeout: sourceTimeout}},
	}
	if err := g.SetTokens(cfg.Tokens); err != nil {
		return nil, err
	}
	if bs, ok := agents.(BatchSaver); ok {
		g.startBatchWriters(bs)
	}
	return g, nil
}

// storeCtx bounds one store call; connection callbacks of opamp-go carry no
// deadline of their own.
func (g *Gateway) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), g.cfg.StoreTimeout)
}

// Task is this task's id, as agent records and its lease name it.
func (g *Gateway) Task() string { return g.cfg.Task }

// Len is the number of agents this task holds.
func (g *Gateway) Len() int {
	return g.sessions.len()
}
