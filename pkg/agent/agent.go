// Package agent is what Myriarch knows of one collector as its OpAMP agent
// reports it: attributes, connection, health, remote configuration and
// package status. The gateway writes it; the engine and the planner read it.
package agent

import (
	"fmt"
	"strings"
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

	Online      bool      `json:"online"`
	LastSeen    time.Time `json:"lastSeen"`
	ConnectedAt time.Time `json:"connectedAt"` // the last (re)connection
	// Capabilities are the OpAMP AgentCapabilities bits the agent declared
	// last; 0 when unknown (an agent recorded before they were stored).
	Capabilities uint64 `json:"capabilities,omitempty"`

	Health         Health             `json:"health"`
	RemoteConfig   RemoteConfigStatus `json:"remoteConfig"`
	ServiceVersion string             `json:"serviceVersion,omitempty"` // normalized, no leading v
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

// OnlineAt is whether the agent counts as online at now: its connection is
// open as last written and it was heard from within silence. The second
// condition takes agents offline when the gateway task that held them died
// without writing anything. silence 0 trusts Online alone.
func (a Agent) OnlineAt(now time.Time, silence time.Duration) bool {
	return a.Online && (silence == 0 || !now.After(a.LastSeen.Add(silence)))
}

// Liveness is the rule by which rollouts judge whether an agent is online.
type Liveness struct {
	// Silence: an open connection counts while the agent was heard from
	// within it (0 trusts the stored connection state alone).
	Silence time.Duration
	// ReconnectGrace: a connection that closed counts as open for this long
	// after it closed (lastSeen), so that agents moving to another gateway
	// task or through a load balancer blip are not offline for rollouts.
	ReconnectGrace time.Duration
	// Retention: an agent offline for longer is gone (0: never).
	Retention time.Duration
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
	return !online && now.Sub(a.LastSeen) > l.Retention
}

// Online reports whether the agent counts as online at now and, while it
// counts as online only by the reconnect grace, when the grace ends: the
// moment the answer changes without a new report. Example: closed at
// 12:00:00 with a 10 s grace: online until 12:00:09.999…, offline from
// 12:00:10, and graceEnd is 12:00:10.
func (l Liveness) Online(a Agent, now time.Time) (online bool, graceEnd time.Time) {
	if a.Online {
		return a.OnlineAt(now, l.Silence), time.Time{}
	}
	end := a.LastSeen.Add(l.ReconnectGrace)
	if l.ReconnectGrace > 0 && !a.LastSeen.IsZero() && now.Before(end) {
		return true, end
	}
	return false, time.Time{}
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
