// Package agent is what Myriarch knows of one collector as its OpAMP agent
// reports it: attributes, connection, health, remote configuration and
// package status. The gateway writes it; the engine and the planner read it.
package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Remote configuration statuses as OpAMP reports them.
const (
	ConfigApplied  = "APPLIED"
	ConfigApplying = "APPLYING"
	ConfigFailed   = "FAILED"
)

// Package statuses of the updater as OpAMP reports them.
const (
	PackageInstalled      = "INSTALLED"
	PackageInstallPending = "INSTALL_PENDING"
	PackageInstalling     = "INSTALLING"
	PackageInstallFailed  = "INSTALL_FAILED"
	PackageDownloading    = "DOWNLOADING"
)

// Component statuses that a collector reports while it starts or stops.
const (
	StatusStarting = "StatusStarting"
	StatusStopping = "StatusStopping"
	StatusOK       = "StatusOK"
)

// Agent is the current view of one collector.
type Agent struct {
	ID         string            `json:"id"`
	Fleet      string            `json:"fleet"`
	Attributes map[string]string `json:"attributes,omitempty"` // flattened: service.version, host.name, labels.<k> ...
	// AssignmentError says why the agent belongs to no fleet although
	// fleets select it (several equally specific ones); empty otherwise.
	AssignmentError string `json:"assignmentError,omitempty"`

	Online bool `json:"online"`
	// LastSeen is when the gateway last stored a change of the agent: its
	// (re)connection, a report that changed a fact, its disconnection.
	// Heartbeats that change nothing do not move it (they are not written);
	// a connected agent was heard from within the liveness timeout.
	LastSeen    time.Time `json:"lastSeen"`
	ConnectedAt time.Time `json:"connectedAt"` // the last (re)connection
	// Task is the gateway task that holds (or last held) the connection;
	// the agent counts as online only while that task's lease is alive.
	// Empty on records written before tasks had leases.
	Task string `json:"task,omitempty"`
	// Capabilities are the OpAMP AgentCapabilities bits the agent declared
	// last; 0 when unknown (an agent recorded before they were stored).
	Capabilities uint64 `json:"capabilities,omitempty"`

	Health       Health             `json:"health"`
	RemoteConfig RemoteConfigStatus `json:"remoteConfig"`
	// EffectiveHash is the hash of the configuration the collector reports
	// that it runs (OpAMP effective_config, see EffectiveConfigHash); empty
	// before the agent reported one. Informational: nothing compares it,
	// since a supervisor merges its own pieces into the remote
	// configuration and the two need not be equal.
	EffectiveHash  string `json:"effectiveHash,omitempty"`
	ServiceVersion string `json:"serviceVersion,omitempty"` // normalized, no leading v
	// VersionSince is when the agent first reported ServiceVersion; it tells
	// a health report of the new process from one of the old.
	VersionSince time.Time        `json:"versionSince,omitempty"`
	Package      PackageStatus    `json:"package"`
	Update       *UpdateComponent `json:"update,omitempty"` // dev.myriarch.update as the updater reports it

	DesiredHash   string `json:"desiredHash,omitempty"`   // configuration the agent should run
	TargetVersion string `json:"targetVersion,omitempty"` // effective target version of its fleet
	// PackageOffer is the collector version the updater executor asked the
	// gateway to offer (PackagesAvailable); empty when none is pending.
	PackageOffer string `json:"packageOffer,omitempty"`
}

// Health is the last health report of the collector process.
type Health struct {
	Healthy    bool      `json:"healthy"`
	Status     string    `json:"status,omitempty"`
	LastError  string    `json:"lastError,omitempty"`
	StartTime  time.Time `json:"startTime,omitempty"`  // start of the reporting process
	ReportedAt time.Time `json:"reportedAt,omitempty"` // when the report was received
	// Components summarizes the component tree below the process (nil when
	// the agent reports none), so that an operator sees which receiver or
	// exporter is the trouble without the whole tree being stored.
	Components *ComponentSummary `json:"components,omitempty"`
}

// ComponentSummary is what the inventory shows of an OpAMP ComponentHealth
// tree: how many components it has and which of them are unhealthy.
type ComponentSummary struct {
	// Total counts the components: the leaves of the tree (a collector
	// reports pipeline:<name> groups whose children are its receivers,
	// processors and exporters).
	Total int `json:"total"`
	// UnhealthyCount counts the leaves that report healthy false.
	UnhealthyCount int `json:"unhealthyCount,omitempty"`
	// Unhealthy names the first of them in sorted order by their path below
	// the process ("pipeline:traces/exporter:otlp"), at most
	// MaxUnhealthyNames of them, so that an agent with a broken tree cannot
	// grow its item.
	Unhealthy []string `json:"unhealthy,omitempty"`
}

// MaxUnhealthyNames bounds ComponentSummary.Unhealthy.
const MaxUnhealthyNames = 32

// RemoteConfigStatus is the agent's report on the configuration it was sent.
type RemoteConfigStatus struct {
	Hash   string `json:"hash,omitempty"`
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Since is when the agent first reported this hash and status.
	Since time.Time `json:"since,omitempty"`
}

// PackageStatus is the OpAMP package status of the collector package.
type PackageStatus struct {
	Version         string `json:"version,omitempty"`
	Status          string `json:"status,omitempty"`
	DownloadPercent int    `json:"downloadPercent,omitempty"`
	Error           string `json:"error,omitempty"`
	// Since is when the agent first reported this version and status; an
	// INSTALL_FAILED older than a retried target belongs to the attempt before.
	Since time.Time `json:"since,omitempty"`
}

// UpdateComponent is the updater's health component dev.myriarch.update:
// the offered version (with a leading v), the version it came from, and one
// entry per step (step:<name>).
type UpdateComponent struct {
	Status    string                `json:"status,omitempty"`
	Version   string                `json:"version,omitempty"`
	From      string                `json:"from,omitempty"`
	StartedAt time.Time             `json:"startedAt,omitempty"`
	Steps     map[string]UpdateStep `json:"steps,omitempty"`
}

// UpdateStep is one step:<name> child of the update component.
type UpdateStep struct {
	Status     string    `json:"status,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitempty"`
	StatusTime time.Time `json:"statusTime,omitempty"`
	LastError  string    `json:"lastError,omitempty"`
}

// CapabilityReportsHealth is OpAMP's AgentCapabilities_ReportsHealth bit.
const CapabilityReportsHealth uint64 = 0x800

// ReportsHealth reports whether the agent declared that it reports health
// (the opamp-go example agent does not). Unknown capabilities count as
// reporting health, so that agents recorded before capabilities were stored
// are judged as before.
func (a Agent) ReportsHealth() bool {
	return a.Capabilities == 0 || a.Capabilities&CapabilityReportsHealth != 0
}

// StartupReport reports whether health is the normal start-up or shut-down of
// a process: unhealthy with StatusStarting, StatusStopping or no status, and
// without lastError. Such reports neither fail nor succeed a target.
func (h Health) StartupReport() bool {
	if h.Healthy || h.LastError != "" {
		return false
	}
	return h.Status == "" || h.Status == StatusStarting || h.Status == StatusStopping
}

// Attr returns an attribute, with service.version taken from ServiceVersion
// when the attribute map lacks it.
func (a Agent) Attr(name string) (string, bool) {
	v, ok := a.Attributes[name]
	if !ok && name == "service.version" && a.ServiceVersion != "" {
		return a.ServiceVersion, true
	}
	return v, ok
}

// OnlineAt is the liveness rule of records without a task (written before
// gateway tasks had leases): the connection is open as last written and the
// agent was heard from within silence. silence 0 trusts Online alone.
func (a Agent) OnlineAt(now time.Time, silence time.Duration) bool {
	return a.Online && (silence == 0 || !now.After(a.LastSeen.Add(silence)))
}

// Lease is what a reader knows of one gateway task's lease.
type Lease struct {
	// Until is when the lease ends: the last renewal plus the liveness
	// timeout, or the moment the task ended it when it drained.
	Until time.Time
	// Ended: the task ended the lease itself (a drain closed its
	// connections), so its agents count as disconnected at Until and get
	// the reconnect grace; a lease that merely ran out did not.
	Ended bool
}

// Leases are the gateway tasks' leases by task id, as read at one moment.
type Leases map[string]Lease

// LeaseSource reads the leases of all gateway tasks (a few items).
type LeaseSource interface {
	Leases(ctx context.Context) (Leases, error)
}

// Liveness is the one rule by which everything (rollouts, the planner, the
// API's inventory and fleet counts, predictions) judges whether an agent is
// online.
type Liveness struct {
	// Silence: a record without a task counts as connected while the agent
	// was heard from (lastSeen) within it (0 trusts the stored connection
	// state alone). Records with a task are judged by the task's lease.
	Silence time.Duration
	// ReconnectGrace: a connection that closed counts as open for this long
	// after it closed (lastSeen, or the end of a drained task's lease), so
	// that agents moving to another gateway task or through a load balancer
	// blip are not offline for rollouts.
	ReconnectGrace time.Duration
	// Retention: an agent offline for longer is gone (0: never).
	Retention time.Duration
	// Source reads the leases for Snapshot; nil leaves Leases as they are.
	Source LeaseSource
	// Leases as read by Snapshot. While nil (no source), records with a
	// task are judged by lastSeen like records without one.
	Leases Leases
}

// Snapshot returns the rule with the leases read now from Source; every
// reader takes one per decision (a pass, a plan, an API request).
func (l Liveness) Snapshot(ctx context.Context) (Liveness, error) {
	if l.Source == nil {
		return l, nil
	}
	leases, err := l.Source.Leases(ctx)
	if err != nil {
		return l, fmt.Errorf("read gateway leases: %w", err)
	}
	if leases == nil {
		leases = Leases{}
	}
	l.Leases = leases
	return l, nil
}

// Gone reports whether the agent has been offline for longer than the
// retention: it no longer counts toward a fleet's statistics and gets no
// new targets. It is derived, not stored, so an agent that reconnects is
// back as itself at once.
func (l Liveness) Gone(a Agent, now time.Time) bool {
	if l.Retention <= 0 || a.LastSeen.IsZero() {
		return false
	}
	online, _ := l.Online(a, now)
	if online {
		return false
	}
	// Offline since its connection closed (lastSeen) or, still connected
	// as stored, since its task's lease ended; lastSeen when the lease is
	// no longer known (its item expired, after longer than the retention).
	since := a.LastSeen
	if lease, ok := l.Leases[a.Task]; ok && a.Online && a.Task != "" && lease.Until.After(since) {
		since = lease.Until
	}
	return now.Sub(since) > l.Retention
}

// Online reports whether the agent counts as online at now and, while it
// counts as online only by the reconnect grace, when the grace ends: the
// moment the answer changes without a new report.
//
// A stored open connection counts while the lease of the task holding it
// is alive (now ≤ Until). A drained task's agents count as disconnected at
// the lease's end; a lease that ran out (the task died) leaves them
// offline at once, and one the reader does not know is judged by the
// connection's last write (unknownTask). A closed connection counts as open for the
// reconnect grace after it closed. Example: closed at 12:00:00 with a 10 s
// grace: online until 12:00:09.999…, offline from 12:00:10, and graceEnd is
// 12:00:10.
func (l Liveness) Online(a Agent, now time.Time) (online bool, graceEnd time.Time) {
	closedAt := a.LastSeen
	if a.Online {
		if a.Task == "" || l.Leases == nil {
			if a.OnlineAt(now, l.Silence) {
				return true, time.Time{}
			}
			return false, time.Time{}
		}
		lease, ok := l.Leases[a.Task]
		if !ok {
			return l.unknownTask(a, now)
		}
		if !now.After(lease.Until) {
			return true, time.Time{}
		}
		if !lease.Ended {
			return false, time.Time{}
		}
		closedAt = lease.Until
	}
	end := closedAt.Add(l.ReconnectGrace)
	if l.ReconnectGrace > 0 && !closedAt.IsZero() && now.Before(end) {
		return true, end
	}
	return false, time.Time{}
}

// unknownTask judges a stored open connection of a task whose lease the
// reader does not know. Either the task is new and wrote its lease after
// the reader's leases were read (they are cached for a few seconds, and a
// task writes its lease before it accepts a connection), or its lease item
// expired long after the task died. The connection's own write tells them
// apart: it counts as online while lastSeen is within Silence, as a record
// without a task would, and graceEnd says when that ends, so that a pass
// judges it again then. Judged offline at once, a new task's agents that a
// pass met in those seconds waited out a whole offlineGracePeriod, since
// nothing else about them changes to bring another pass.
func (l Liveness) unknownTask(a Agent, now time.Time) (online bool, graceEnd time.Time) {
	if l.Silence <= 0 || a.LastSeen.IsZero() || now.After(a.LastSeen.Add(l.Silence)) {
		return false, time.Time{}
	}
	return true, a.LastSeen.Add(l.Silence).Add(time.Nanosecond)
}

// CachedLeases serves the leases of src for ttl before reading them again,
// so that a reader answering many requests reads the lease table at most
// once per ttl. Safe for concurrent use.
func CachedLeases(src LeaseSource, ttl time.Duration, now func() time.Time) LeaseSource {
	return &leaseCache{src: src, ttl: ttl, now: now}
}

type leaseCache struct {
	src  LeaseSource
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	at   time.Time
	last Leases
}

func (c *leaseCache) Leases(ctx context.Context) (Leases, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.last != nil && now.Sub(c.at) < c.ttl && !now.Before(c.at) {
		return c.last, nil
	}
	leases, err := c.src.Leases(ctx)
	if err != nil {
		return nil, err
	}
	if leases == nil {
		leases = Leases{}
	}
	c.last, c.at = leases, now
	return leases, nil
}

// Attribute names the display name comes from, in order.
const (
	AttrHostName   = "host.name"
	AttrInstanceID = "service.instance.id"
)

// DisplayName is the name people recognise the agent by: its host.name,
// else its service.instance.id, else its instance UID.
func (a Agent) DisplayName() string {
	for _, k := range []string{AttrHostName, AttrInstanceID} {
		if v := a.Attributes[k]; v != "" {
			return v
		}
	}
	return a.ID
}

// OfferKey names one package offer: the version, and the attempt of the
// target when it is a retry ("0.162.0", then "0.162.0#2"). A retried target
// gets a new key, so the gateway offers again with a new hash that the
// updater does not take for the offer it already failed.
func OfferKey(version string, attempt int) string {
	if version == "" || attempt <= 1 {
		return version
	}
	return fmt.Sprintf("%s#%d", version, attempt)
}

// OfferVersion is the version of an offer key.
func OfferVersion(key string) string {
	v, _, _ := strings.Cut(key, "#")
	return v
}
