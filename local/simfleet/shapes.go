package simfleet

import (
	"maps"
	"slices"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/adapters/updater"
)

// UpdateComponent is the health component of the myriarch-updater, a child
// of the agent's top-level health.
const UpdateComponent = "dev.myriarch.update"

// Collector statuses as the collector's OpAMP extension names them.
const (
	StatusStarting         = "StatusStarting"
	StatusOK               = "StatusOK"
	StatusRecoverableError = "StatusRecoverableError"
)

// Updater steps in their order, and what a step and an attempt can be.
const (
	StepOffered     = "offered"
	StepDownloading = "downloading"
	StepVerifying   = "verifying"
	StepInstalling  = "installing"
	StepRestarting  = "restarting"
	StepHealthCheck = "health_check"

	StepRunning = "running"
	StepDone    = "done"
	StepFailed  = "failed"

	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
)

// collectorHealth is the health of the collector process.
type collectorHealth struct {
	healthy    bool
	status     string
	lastError  string
	startTime  time.Time // start of the process
	statusTime time.Time
}

// attempt is one update as the updater reports it: state, not events.
type attempt struct {
	version    string // offered, without a leading v
	from       string // running before, without a leading v
	startedAt  time.Time
	status     string // the running step, or AttemptSucceeded / AttemptFailed
	statusTime time.Time
	lastError  string
	steps      map[string]step // by step name, without "step:"
}

type step struct {
	status     string
	startedAt  time.Time
	statusTime time.Time
	lastError  string
}

// begin starts a step: it becomes the attempt's status.
func (u *attempt) begin(name string, now time.Time) {
	u.steps[name] = step{status: StepRunning, startedAt: now, statusTime: now}
	u.status, u.statusTime = name, now
}

// finish ends a running step as done, or failed with lastError (which also
// ends the attempt as failed).
func (u *attempt) finish(name string, now time.Time, lastError string) {
	s := u.steps[name]
	s.status, s.statusTime = StepDone, now
	if lastError != "" {
		s.status, s.lastError = StepFailed, lastError
		u.status, u.lastError = AttemptFailed, lastError
	}
	u.steps[name] = s
	u.statusTime = now
}

// description is the AgentDescription of agent n: identifying service.*, the
// host, its zone and its labels as plain "labels.<k>" attributes.
// description is what agent n reports of itself; extra attributes (set at
// run time, a host moved or relabelled) are added last and replace the
// configured ones of the same key.
func description(cfg Config, n int, instanceID, version string, extra map[string]string) *protobufs.AgentDescription {
	d := &protobufs.AgentDescription{
		IdentifyingAttributes: []*protobufs.KeyValue{
			kv("service.name", cfg.ServiceName),
			kv("service.instance.id", instanceID),
			kv("service.version", version),
		},
		NonIdentifyingAttributes: []*protobufs.KeyValue{
			kv("host.name", HostName(n)),
			kv("host.arch", "amd64"),
			kv("os.type", "linux"),
			kv("site.timezone", cfg.timezone(n)),
		},
	}
	if cfg.Fleet != "" {
		d.NonIdentifyingAttributes = append(d.NonIdentifyingAttributes, kv("labels.fleet", cfg.Fleet))
	}
	if cfg.canary(n) {
		d.NonIdentifyingAttributes = append(d.NonIdentifyingAttributes, kv("labels.wave", "canary"))
	}
	if region, zone := cfg.zone(n); region != "" {
		d.NonIdentifyingAttributes = append(d.NonIdentifyingAttributes, kv("cloud.region", region), kv("cloud.availability_zone", zone))
	}
	if len(extra) == 0 {
		return d
	}
	kept := d.NonIdentifyingAttributes[:0]
	for _, a := range d.NonIdentifyingAttributes {
		if _, replaced := extra[a.Key]; !replaced {
			kept = append(kept, a)
		}
	}
	d.NonIdentifyingAttributes = kept
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		d.NonIdentifyingAttributes = append(d.NonIdentifyingAttributes, kv(k, extra[k]))
	}
	return d
}

// attribute is the value of key in d, "" when d does not report it.
func attribute(d *protobufs.AgentDescription, key string) string {
	for _, a := range slices.Concat(d.GetIdentifyingAttributes(), d.GetNonIdentifyingAttributes()) {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

func kv(key, value string) *protobufs.KeyValue {
	return &protobufs.KeyValue{Key: key, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: value}}}
}

// health is the agent's top-level health: the collector process, with the
// updater's component as a child once an update was attempted.
func health(h collectorHealth, u *attempt) *protobufs.ComponentHealth {
	out := &protobufs.ComponentHealth{
		Healthy:            h.healthy,
		Status:             h.status,
		LastError:          h.lastError,
		StartTimeUnixNano:  unixNano(h.startTime),
		StatusTimeUnixNano: unixNano(h.statusTime),
	}
	if u != nil {
		out.ComponentHealthMap = map[string]*protobufs.ComponentHealth{UpdateComponent: updateComponent(u)}
	}
	return out
}

// updateComponent carries the attempt as the myriarch-updater reports its
// own (updater.Component): the simulated updater speaks the same protocol.
func updateComponent(u *attempt) *protobufs.ComponentHealth {
	a := &updater.Attempt{Offer: updater.Offer{Version: u.version}, From: u.from, Status: u.status,
		StartedAt: u.startedAt, StatusTime: u.statusTime, LastError: u.lastError, Steps: map[updater.Step]updater.StepState{}}
	for name, s := range u.steps {
		a.Steps[updater.Step(name)] = updater.StepState{Status: s.status, StartedAt: s.startedAt, StatusTime: s.statusTime, LastError: s.lastError}
	}
	return updater.Component(a)
}

// pkgState is the collector package as the updater reports it.
type pkgState struct {
	name            string
	hasVersion      string // installed, without a leading v
	offeredVersion  string // as offered
	offeredHash     []byte
	allPackagesHash []byte // of the last offer handled
	status          protobufs.PackageStatusEnum
	downloadPercent float64
	errorMessage    string
}

// packageStatuses reports the collector package; the download details only
// while downloading.
func packageStatuses(p pkgState) *protobufs.PackageStatuses {
	s := &protobufs.PackageStatus{
		Name:                 p.name,
		AgentHasVersion:      p.hasVersion,
		ServerOfferedVersion: p.offeredVersion,
		ServerOfferedHash:    slices.Clone(p.offeredHash),
		Status:               p.status,
		ErrorMessage:         p.errorMessage,
	}
	if p.status == protobufs.PackageStatusEnum_PackageStatusEnum_Downloading {
		s.DownloadDetails = &protobufs.PackageDownloadDetails{DownloadPercent: p.downloadPercent}
	}
	all := slices.Clone(p.allPackagesHash)
	if all == nil {
		all = []byte{} // the client refuses a nil hash
	}
	return &protobufs.PackageStatuses{
		Packages:                      map[string]*protobufs.PackageStatus{p.name: s},
		ServerProvidedAllPackagesHash: all,
	}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}
