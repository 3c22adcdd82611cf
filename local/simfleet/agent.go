package simfleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/adapters/updater"
)

// capabilities are those of the collector's supervisor with the updater.
const capabilities = protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsEffectiveConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsPackages |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsPackageStatuses |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat |
	// Takes the credential the gateway binds at enrollment (credential.go).
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings

// bootstrapConfig is the effective configuration before any remote one.
const bootstrapConfig = "# simfleet bootstrap configuration\nreceivers: {otlp: {protocols: {grpc: {}}}}\nexporters: {debug: {}}\nservice: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"

// agent is one simulated collector with its supervisor and updater. The
// OpAMP client's callbacks only queue work; one worker goroutine carries it
// out and is the only one that reports, so reports keep their order.
type agent struct {
	n       int
	uid     uuid.UUID
	cfg     Config
	failing bool
	jit     jitter // worker goroutine only
	log     *slog.Logger
	// client is replaced when the agent reconnects with a credential;
	// cmu is held to replace it, and to use it (opamp).
	client  client.OpAMPClient
	cmu     sync.RWMutex
	wake    chan struct{}
	done    chan struct{}
	changes *changes // told after every change of the state below

	healthCheck *http.Server // with Config.HealthCheck

	mu            sync.Mutex
	attrs         map[string]string // attributes set at run time: the probe address, SetAttributes
	connected     bool
	version       string // service.version, without a leading v
	health        collectorHealth
	remote        *protobufs.RemoteConfigStatus // nil before the first remote configuration
	effective     *protobufs.AgentConfigMap
	pkg           pkgState
	update        *attempt // the last update attempt
	busy          bool
	traffic       traffic
	pendingConfig *protobufs.AgentRemoteConfig
	pendingOffer  *offer
	// pendingInstall is a version installed from outside OpAMP (Install).
	pendingInstall string
	// credential is the agent's own, bound by the gateway at enrollment
	// ("" before: the fleet's token); pendingCredential one just offered.
	credential, pendingCredential string
}

// offer is the collector package of a PackagesAvailable message.
type offer struct {
	name    string
	pkg     *protobufs.PackageAvailable
	allHash []byte
}

func newAgent(cfg Config, n int) *agent {
	now := cfg.Clock.Now()
	version := bare(cfg.StartVersion)
	h := collectorHealth{healthy: true, status: StatusOK, startTime: now, statusTime: now}
	return &agent{
		n: n, uid: InstanceUID(cfg.Seed, n), cfg: cfg, failing: cfg.failing(n), jit: newJitter(cfg.Seed, n),
		log:     cfg.Logger.With("agent", HostName(n)),
		wake:    make(chan struct{}, 1),
		changes: newChanges(),
		done:    make(chan struct{}),
		version: version,
		health:  h,
		traffic: newTraffic(cfg.SpansPerSecond, h),
		effective: &protobufs.AgentConfigMap{ConfigMap: map[string]*protobufs.AgentConfigFile{
			"": {Body: []byte(bootstrapConfig), ContentType: "text/yaml"},
		}},
		pkg: pkgState{name: cfg.PackageName, hasVersion: version, status: protobufs.PackageStatusEnum_PackageStatusEnum_Installed},
	}
}

// start connects the OpAMP client and starts the worker; ctx bounds the work.
// The health check, if any, listens first: its address is in the first
// description.
func (a *agent) start(ctx context.Context) (err error) {
	if a.cfg.HealthCheck {
		if err := a.serveHealthCheck(); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = a.healthCheck.Close() // the fleet stops only the agents that started
			}
		}()
	}
	if err := a.connect(ctx); err != nil {
		return err
	}
	go a.work(ctx)
	return nil
}

// connect starts an OpAMP client with the agent's state and its credential
// (the fleet's token before it has one); under cmu, or before the worker
// runs.
func (a *agent) connect(ctx context.Context) error {
	logger := opampLogger{a.log}
	if a.cfg.websocket() {
		a.client = client.NewWebSocket(logger)
	} else {
		a.client = client.NewHTTP(logger)
	}
	a.mu.Lock()
	desc, h, pkgs := a.descriptionLocked(), health(a.health, a.update), packageStatuses(a.pkg)
	remote := proto.Clone(a.remote).(*protobufs.RemoteConfigStatus) // kept from an earlier run (StateDir), else nil
	a.mu.Unlock()
	prepare := []error{a.client.SetAgentDescription(desc)}
	if !a.cfg.NoHealthReports {
		prepare = append(prepare, a.client.SetHealth(h))
	}
	for _, err := range prepare {
		if err != nil {
			return fmt.Errorf("prepare agent %s: %w", HostName(a.n), err)
		}
	}
	header := http.Header{}
	if token := a.bearer(); token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	heartbeat := a.cfg.Heartbeat
	settings := types.StartSettings{
		OpAMPServerURL:        a.cfg.Endpoint,
		Header:                header,
		InstanceUid:           types.InstanceUid(a.uid),
		PackagesStateProvider: updater.OwnDownloads{Statuses: func() *protobufs.PackageStatuses { return pkgs }},
		HeartbeatInterval:     &heartbeat,
		// Deprecated in favour of SetCapabilities, which in v0.23 refuses the
		// package capabilities before Start has set the PackagesStateProvider.
		Capabilities: a.capabilities(),
		Callbacks: types.Callbacks{
			OnConnect:       func(context.Context) { a.setConnected(true) },
			OnConnectFailed: func(_ context.Context, err error) { a.setConnected(false); a.log.Debug("connect failed", "err", err) },
			OnError: func(_ context.Context, e *protobufs.ServerErrorResponse) {
				a.log.Warn("server error", "msg", e.GetErrorMessage())
			},
			OnMessage:                 a.onMessage,
			GetEffectiveConfig:        a.effectiveConfig,
			OnOpampConnectionSettings: a.onConnectionSettings,
		},
	}
	if err := a.client.Start(ctx, settings); err != nil {
		return fmt.Errorf("start agent %s: %w", HostName(a.n), err)
	}
	// The client takes the status only once Start has set the capabilities.
	if remote != nil {
		a.warn("remote config status", a.client.SetRemoteConfigStatus(remote))
	}
	return nil
}

// capabilities are what the agent declares: without ReportsHealth when it
// plays an agent that reports no health.
func (a *agent) capabilities() protobufs.AgentCapabilities {
	if a.cfg.NoHealthReports {
		return capabilities &^ protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth
	}
	return capabilities
}

// stop waits for the worker (its context is already done), disconnects and
// closes the health check.
func (a *agent) stop(ctx context.Context) error {
	select {
	case <-a.done:
	case <-ctx.Done():
	}
	a.cmu.RLock()
	err := a.client.Stop(ctx)
	a.cmu.RUnlock()
	if a.healthCheck != nil {
		err = errors.Join(err, a.healthCheck.Close())
	}
	return err
}

func (a *agent) setConnected(c bool) {
	a.mu.Lock()
	a.connected = c
	a.mu.Unlock()
	a.changes.agentChanged(a)
}

// onMessage queues the newest remote configuration and collector package
// offer for the worker; it returns at once, as the client asks.
func (a *agent) onMessage(_ context.Context, msg *types.MessageData) {
	var of *offer
	if msg.PackagesAvailable != nil {
		of = a.pick(msg.PackagesAvailable)
	}
	if msg.RemoteConfig == nil && of == nil {
		return
	}
	a.mu.Lock()
	if msg.RemoteConfig != nil {
		a.pendingConfig = proto.Clone(msg.RemoteConfig).(*protobufs.AgentRemoteConfig)
	}
	if of != nil {
		a.pendingOffer = of
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// pick finds the collector package in an offer: the one named PackageName,
// else the top-level package.
func (a *agent) pick(pa *protobufs.PackagesAvailable) *offer {
	name, p := a.cfg.PackageName, pa.GetPackages()[a.cfg.PackageName]
	if p == nil {
		for k, v := range pa.GetPackages() {
			if v.GetType() == protobufs.PackageType_PackageType_TopLevel {
				name, p = k, v
				break
			}
		}
	}
	if p == nil || p.GetVersion() == "" {
		return nil
	}
	return &offer{name: name, pkg: proto.Clone(p).(*protobufs.PackageAvailable), allHash: pa.GetAllPackagesHash()}
}

// work carries out queued configurations and offers one after the other, as
// a supervisor does; a configuration goes before an offer.
func (a *agent) work(ctx context.Context) {
	defer close(a.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		for {
			if cred := a.takeCredential(); cred != "" {
				a.reconnect(ctx, cred)
			}
			rc, of, version := a.take()
			if rc == nil && of == nil && version == "" {
				break
			}
			if rc != nil && a.applyConfig(ctx, rc) != nil {
				return
			}
			if of != nil && a.install(ctx, of) != nil {
				return
			}
			if version != "" && a.replace(ctx, version) != nil {
				return
			}
		}
	}
}

// take dequeues the pending work that is new: a configuration whose hash the
// agent has not reported yet; an offer of a version it does not run, with an
// all-packages hash it has not handled (OpAMP's way to say "same offer"); a
// version to install from outside that it does not run.
func (a *agent) take() (*protobufs.AgentRemoteConfig, *offer, string) {
	defer a.changes.agentChanged(a)
	a.mu.Lock()
	defer a.mu.Unlock()
	rc, of, version := a.pendingConfig, a.pendingOffer, a.pendingInstall
	a.pendingConfig, a.pendingOffer, a.pendingInstall = nil, nil, ""
	if rc != nil && a.remote != nil && string(rc.GetConfigHash()) == string(a.remote.GetLastRemoteConfigHash()) {
		rc = nil
	}
	if of != nil && (bare(of.pkg.GetVersion()) == a.version ||
		len(of.allHash) > 0 && string(of.allHash) == string(a.pkg.allPackagesHash)) {
		of = nil
	}
	if version == a.version {
		version = ""
	}
	a.busy = rc != nil || of != nil || version != ""
	return rc, of, version
}

func (a *agent) effectiveConfig(context.Context) (*protobufs.EffectiveConfig, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &protobufs.EffectiveConfig{ConfigMap: proto.Clone(a.effective).(*protobufs.AgentConfigMap)}, nil
}

func (a *agent) descriptionLocked() *protobufs.AgentDescription {
	return description(a.cfg, a.n, a.uid.String(), a.version, a.attrs)
}

// part is what a report sends besides the state change.
type part int

const (
	withHealth part = 1 << iota
	withDescription
	withPackages
)

// report applies change to the state (mu held) and sends the parts. The
// client may send each part in a message of its own, so the health goes
// first: on a restart into a new version the server sees the new process's
// start-up report before (or with) the new service.version, as with the real
// supervisor, never the old process's StatusOK under the new version.
func (a *agent) report(change func(), parts part) {
	a.mu.Lock()
	change()
	h := health(a.health, a.update)
	desc, pkgs := a.descriptionLocked(), packageStatuses(a.pkg)
	a.mu.Unlock()
	a.cmu.RLock()
	defer a.cmu.RUnlock()
	if parts&withHealth != 0 && !a.cfg.NoHealthReports {
		a.warn("health", a.client.SetHealth(h))
	}
	if parts&withPackages != 0 {
		a.warn("package statuses", a.client.SetPackageStatuses(pkgs))
	}
	if parts&withDescription != 0 {
		a.warn("description", a.client.SetAgentDescription(desc))
	}
	a.persist()
	a.changes.agentChanged(a)
}

// reportConfig sends the remote configuration status.
func (a *agent) reportConfig(status protobufs.RemoteConfigStatuses, hash []byte, errorMessage string) {
	rcs := &protobufs.RemoteConfigStatus{LastRemoteConfigHash: hash, Status: status, ErrorMessage: errorMessage}
	a.mu.Lock()
	a.remote = rcs
	a.mu.Unlock()
	a.cmu.RLock()
	a.warn("remote config status", a.client.SetRemoteConfigStatus(proto.Clone(rcs).(*protobufs.RemoteConfigStatus)))
	a.cmu.RUnlock()
	a.persist()
	a.changes.agentChanged(a)
}

func (a *agent) warn(what string, err error) {
	if err != nil {
		a.log.Warn("report "+what, "err", err)
	}
}

// sleep waits a simulated duration, divided by the speed.
func (a *agent) sleep(ctx context.Context, d time.Duration) error {
	return sleep(ctx, a.cfg.Clock, scale(d, a.cfg.Speed))
}

func bare(version string) string { return strings.TrimPrefix(strings.TrimSpace(version), "v") }

// opampLogger hands opamp-go's log lines to slog.
type opampLogger struct{ log *slog.Logger }

func (l opampLogger) Debugf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "source", "opamp")
}

func (l opampLogger) Errorf(ctx context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, "settings.Capabilities is deprecated") {
		l.log.DebugContext(ctx, msg, "source", "opamp") // chosen on purpose, see start
		return
	}
	l.log.WarnContext(ctx, msg, "source", "opamp")
}
