package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/adapters/updater"
)

// capabilities: the updater reports its attempt as health and the package
// status, and takes packages. Not AcceptsOpAMPConnectionSettings: its key
// is its identity, kept in its own configuration.
const capabilities = protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsPackages |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsPackageStatuses |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat

const heartbeat = 30 * time.Second

// agent is the updater's OpAMP client. Callbacks only queue an offer; one
// worker goroutine carries offers out one after the other, and the
// updater's reports go from it to the client.
type agent struct {
	cfg     Config
	uid     uuid.UUID
	version string
	host    string
	start   time.Time // of the process: the health's start time
	log     *slog.Logger
	upd     *updater.Updater
	client  client.OpAMPClient

	mu        sync.Mutex
	pending   *updater.Offer // the newest offer not taken yet
	collector string         // the link last described
	wake      chan struct{}
}

// connect starts the client: the description and health are set before
// Start (the client requires them), the package statuses come from the
// updater through the state provider.
func (a *agent) connect(ctx context.Context, s secrets) error {
	a.client = client.NewWebSocket(opampLogger{a.log})
	collector, err := collectorUID(a.cfg)
	if err != nil {
		return err
	}
	a.collector = collector
	snap := a.upd.Snapshot()
	if err := a.client.SetAgentDescription(description(a.uid, collector, a.version, a.host)); err != nil {
		return err
	}
	if err := a.client.SetHealth(snap.Health(a.start)); err != nil {
		return err
	}
	tlsConfig, err := tlsConfig(a.cfg)
	if err != nil {
		return err
	}
	header := http.Header{}
	header.Set("Authorization", "Bearer "+s.token)
	header.Set("X-Myriarch-Agent-Key", s.key)
	hb := heartbeat
	return a.client.Start(ctx, types.StartSettings{
		OpAMPServerURL:        a.cfg.Server.Endpoint,
		Header:                header,
		TLSConfig:             tlsConfig,
		InstanceUid:           types.InstanceUid(a.uid),
		PackagesStateProvider: updater.OwnDownloads{Statuses: func() *protobufs.PackageStatuses { return a.upd.Snapshot().PackageStatuses() }},
		HeartbeatInterval:     &hb,
		// Deprecated in favour of SetCapabilities, which in v0.23 refuses
		// the package capabilities before Start has the state provider.
		Capabilities: capabilities,
		Callbacks: types.Callbacks{
			OnConnect:       a.onConnect,
			OnConnectFailed: func(_ context.Context, err error) { a.log.Warn("connect failed", "err", err) },
			OnError: func(_ context.Context, e *protobufs.ServerErrorResponse) {
				a.log.Warn("server error", "msg", e.GetErrorMessage())
			},
			OnMessage: a.onMessage,
		},
	})
}

// onConnect reads the collector's UID again before the connection's first
// message, which carries the description: a supervisor that changed its
// UID is followed. An unreadable one keeps the last link.
func (a *agent) onConnect(context.Context) {
	collector, err := collectorUID(a.cfg)
	if err != nil {
		a.log.Warn("read the collector's instance UID; keeping the last one", "err", err, "collector", a.collector)
		return
	}
	a.mu.Lock()
	changed := collector != a.collector
	a.collector = collector
	a.mu.Unlock()
	if changed {
		a.log.Info("the collector's instance UID changed", "collector", collector)
		a.warn("description", a.client.SetAgentDescription(description(a.uid, collector, a.version, a.host)))
	}
}

// linked is the collector's UID last described.
func (a *agent) linked() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.collector
}

// onMessage queues the collector package of an offer for the worker; it
// returns at once, as the client asks. A newer offer replaces one not
// taken yet.
func (a *agent) onMessage(_ context.Context, msg *types.MessageData) {
	o, ok := pick(msg.PackagesAvailable)
	if !ok {
		return
	}
	a.mu.Lock()
	a.pending = &o
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// pick is the top-level package of an offer (the first by name, should
// there be several), as an updater offer.
func pick(pa *protobufs.PackagesAvailable) (updater.Offer, bool) {
	for _, name := range slices.Sorted(maps.Keys(pa.GetPackages())) {
		p := pa.GetPackages()[name]
		if p.GetType() != protobufs.PackageType_PackageType_TopLevel || p.GetVersion() == "" {
			continue
		}
		return updater.Offer{
			Package:         name,
			Version:         p.GetVersion(),
			PackageHash:     p.GetHash(),
			URL:             p.GetFile().GetDownloadUrl(),
			ContentHash:     p.GetFile().GetContentHash(),
			Signature:       p.GetFile().GetSignature(),
			AllPackagesHash: pa.GetAllPackagesHash(),
		}, true
	}
	return updater.Offer{}, false
}

// work finishes what a crash left, then carries out offers until ctx ends.
func (a *agent) work(ctx context.Context) {
	a.upd.Resume(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		a.mu.Lock()
		o := a.pending
		a.pending = nil
		a.mu.Unlock()
		if o != nil {
			a.upd.Handle(ctx, *o)
		}
	}
}

// report sends the updater's report: the health first, then the package
// status, each resent whole.
func (a *agent) report(r updater.Report) {
	a.warn("health", a.client.SetHealth(r.Health(a.start)))
	a.warn("package statuses", a.client.SetPackageStatuses(r.PackageStatuses()))
}

func (a *agent) warn(what string, err error) {
	if err != nil {
		a.log.Warn("report "+what, "err", err)
	}
}

// opampLogger hands opamp-go's lines to slog.
type opampLogger struct{ log *slog.Logger }

func (l opampLogger) Debugf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "source", "opamp")
}

func (l opampLogger) Errorf(ctx context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, "settings.Capabilities is deprecated") { // chosen on purpose, see connect
		l.log.DebugContext(ctx, msg, "source", "opamp")
		return
	}
	l.log.WarnContext(ctx, msg, "source", "opamp")
}
