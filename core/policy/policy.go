// Package policy is the RolloutPolicy: how a rollout proceeds. It parses and
// validates the YAML object, knows the defaults and the built-in policy, and
// produces the snapshot with every default filled in that a rollout keeps.
package policy

import (
	"cmp"
	"time"

	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/windows"
)

// APIVersion and Kind of the YAML object.
const (
	APIVersion = "myriarch.dev/v1alpha1"
	ObjectKind = "RolloutPolicy"
)

// Kind is what a rollout changes.
type Kind string

const (
	KindConfig  Kind = "config"
	KindVersion Kind = "version"
)

// OnFailure is what happens when a wave reaches the failure threshold (or,
// with topology, when a pass fails).
type OnFailure string

const (
	OnFailurePause    OnFailure = "pause"
	OnFailureRollback OnFailure = "rollback" // every started target of the rollout rolls back
	// OnFailureStop is the wave-rollout name of pause; the snapshot holds pause.
	OnFailureStop OnFailure = "stop"
	// OnFailureRollbackWave rolls back the failed stage; stages already
	// passed keep the change.
	OnFailureRollbackWave OnFailure = "rollback-wave"
	// OnFailureRollbackAll rolls back the failed stage and then the stages
	// already passed, in reverse order.
	OnFailureRollbackAll OnFailure = "rollback-all"
)

// Defaults of a policy (docs/policy.md). DefaultName is the policy a fleet uses without a reference.
const (
	DefaultName                = "default"
	DefaultMaxConcurrent       = 50
	DefaultHealthWait          = 60 * time.Second
	DefaultOfflineGracePeriod  = 15 * time.Minute
	DefaultMaxFailed           = 1
	DefaultTimezoneAttribute   = "site.timezone"
	DefaultApplyTimeoutConfig  = 10 * time.Minute
	DefaultApplyTimeoutVersion = 30 * time.Minute
	RestWaveName               = "rest"
)

// Policy is a parsed RolloutPolicy object.
type Policy struct {
	Name   string `json:"name"`
	Path   string `json:"path,omitempty"`   // file in the GitOps repository
	Commit string `json:"commit,omitempty"` // revision it was read from
	Spec   Spec   `json:"spec"`
}

// Spec is the spec block as written: zero values mean "not set".
type Spec struct {
	Waves              []Wave           `json:"waves,omitempty"`
	MaxConcurrent      *int             `json:"maxConcurrent,omitempty"` // nil: default; 0: unlimited
	HealthWait         time.Duration    `json:"healthWait,omitempty"`
	ApplyTimeout       time.Duration    `json:"applyTimeout,omitempty"`
	OfflineGracePeriod time.Duration    `json:"offlineGracePeriod,omitempty"`
	FailureThreshold   Threshold        `json:"failureThreshold"`
	OnFailure          OnFailure        `json:"onFailure,omitempty"`
	TimezoneAttribute  string           `json:"timezoneAttribute,omitempty"`
	DefaultTimezone    string           `json:"defaultTimezone,omitempty"`
	MaintenanceWindows []windows.Window `json:"maintenanceWindows,omitempty"`
	Topology           Topology         `json:"topology,omitzero"`
	Regions            []string         `json:"regions,omitempty"`          // region order; the others follow alphabetically
	MaxUnavailable     Amount           `json:"maxUnavailable,omitzero"`    // batch size of a pass, for the waves that set none
	Health             *Health          `json:"health,omitempty"`           // gate read after each stage
	ApprovalsBetween   []string         `json:"approvalsBetween,omitempty"` // waves after which the rollout waits for approval
	Approvals          Approvals        `json:"approvals,omitzero"`         // rules of every approval
	Freezes            []Freeze         `json:"freezes,omitempty"`          // periods in which stages of some regions do not start
}

// Wave is one wave of a policy: a selector or a cumulative percent, and
// optionally how it is split into stages, passes and batches.
type Wave struct {
	Name            string             `json:"name"`
	Selector        *selector.Selector `json:"selector,omitempty"`
	Percent         int                `json:"percent,omitempty"`
	RequireApproval bool               `json:"requireApproval,omitempty"`
	By              Split              `json:"by,omitempty"`              // "": one stage, one pass
	ParallelRegions int                `json:"parallelRegions,omitempty"` // regions per stage; 0: not set
	Bake            time.Duration      `json:"bake,omitempty"`            // wait after each stage
	MaxUnavailable  Amount             `json:"maxUnavailable,omitzero"`   // batch size of a pass; zero: not set
	// BatchGate: after every batch of a pass but the last, the probes read
	// that batch's targets for BatchBake (0: a single reading).
	BatchGate bool          `json:"batchGate,omitempty"`
	BatchBake time.Duration `json:"batchBake,omitempty"`
}

// Threshold is the failure threshold of a wave.
type Threshold struct {
	MaxFailed        int `json:"maxFailed,omitempty"`
	MaxFailedPercent int `json:"maxFailedPercent,omitempty"`
}

// Snapshot is the policy a rollout keeps: every default filled in, so that
// later edits in Git change neither the rollout nor its health waits.
type Snapshot struct {
	Name    string `json:"name"`
	Path    string `json:"path,omitempty"`
	Commit  string `json:"commit,omitempty"`
	BuiltIn bool   `json:"builtIn,omitempty"`
	Kind    Kind   `json:"kind"`

	Waves              []Wave           `json:"waves"`
	MaxConcurrent      int              `json:"maxConcurrent"` // 0 = unlimited
	HealthWait         time.Duration    `json:"healthWait"`
	ApplyTimeout       time.Duration    `json:"applyTimeout"`
	OfflineGracePeriod time.Duration    `json:"offlineGracePeriod"`
	FailureThreshold   Threshold        `json:"failureThreshold"`
	OnFailure          OnFailure        `json:"onFailure"`
	TimezoneAttribute  string           `json:"timezoneAttribute"`
	DefaultTimezone    string           `json:"defaultTimezone,omitempty"`
	MaintenanceWindows []windows.Window `json:"maintenanceWindows,omitempty"`
	// Topology is filled with the defaults when a wave has by, else empty.
	Topology Topology `json:"topology,omitzero"`
	Regions  []string `json:"regions,omitempty"`
	// MaxUnavailable is the rollout's value as written; the waves carry the
	// effective one, and RestWave uses this one.
	MaxUnavailable Amount `json:"maxUnavailable,omitzero"`
	// Health is the gate with every default filled in; nil: the gate of a
	// stage is its bake alone.
	Health           *Health   `json:"health,omitempty"`
	ApprovalsBetween []string  `json:"approvalsBetween,omitempty"`
	Approvals        Approvals `json:"approvals"`
	Freezes          []Freeze  `json:"freezes,omitempty"`
}

// DefaultApplyTimeout is the applyTimeout of a kind when the policy sets none.
func DefaultApplyTimeout(k Kind) time.Duration {
	if k == KindVersion {
		return DefaultApplyTimeoutVersion
	}
	return DefaultApplyTimeoutConfig
}

// BuiltIn is the policy that applies when a fleet's policy does not exist:
// one wave of 100 percent and every default.
func BuiltIn(k Kind) Snapshot {
	p := Policy{Name: DefaultName, Spec: Spec{Waves: []Wave{{Name: "all", Percent: 100}}}}
	s := p.Snapshot(k)
	s.BuiltIn = true
	return s
}

// Snapshot fills every default in. A healthWait of 0 means 60 seconds; both
// threshold values 0 mean maxFailed 1; onFailure stop is pause. Each wave
// carries its effective topology values (see effectiveWave): by az is zone,
// parallelRegions 1 and maxUnavailable 1 for a wave with by.
func (p Policy) Snapshot(k Kind) Snapshot {
	s := p.Spec
	out := Snapshot{
		Name: p.Name, Path: p.Path, Commit: p.Commit, Kind: k,
		Waves:              cloneWaves(s.Waves),
		MaxConcurrent:      DefaultMaxConcurrent,
		HealthWait:         orDefault(s.HealthWait, DefaultHealthWait),
		ApplyTimeout:       orDefault(s.ApplyTimeout, DefaultApplyTimeout(k)),
		OfflineGracePeriod: orDefault(s.OfflineGracePeriod, DefaultOfflineGracePeriod),
		FailureThreshold:   s.FailureThreshold,
		OnFailure:          s.OnFailure,
		TimezoneAttribute:  s.TimezoneAttribute,
		DefaultTimezone:    s.DefaultTimezone,
		MaintenanceWindows: cloneWindows(s.MaintenanceWindows),
		Regions:            cloneStrings(s.Regions),
		MaxUnavailable:     s.MaxUnavailable,
	}
	if s.MaxConcurrent != nil {
		out.MaxConcurrent = *s.MaxConcurrent
	}
	out.Health = s.Health.withDefaults()
	out.ApprovalsBetween = cloneStrings(s.ApprovalsBetween)
	out.Approvals = s.Approvals.withDefaults()
	out.Freezes = append([]Freeze(nil), s.Freezes...)
	if len(out.Waves) == 0 {
		out.Waves = []Wave{{Name: "all", Percent: 100}}
	}
	for i, w := range out.Waves {
		out.Waves[i] = effectiveWave(w, s.MaxUnavailable)
	}
	approveAfter(out.Waves, s.ApprovalsBetween)
	if out.Staged() {
		out.Topology = Topology{
			RegionAttribute: cmp.Or(s.Topology.RegionAttribute, DefaultRegionAttribute),
			ZoneAttribute:   cmp.Or(s.Topology.ZoneAttribute, DefaultZoneAttribute),
			HostAttribute:   cmp.Or(s.Topology.HostAttribute, DefaultHostAttribute),
		}
	}
	if out.FailureThreshold.MaxFailed == 0 && out.FailureThreshold.MaxFailedPercent == 0 {
		out.FailureThreshold.MaxFailed = DefaultMaxFailed
	}
	if out.OnFailure == "" || out.OnFailure == OnFailureStop {
		out.OnFailure = OnFailurePause
	}
	if out.TimezoneAttribute == "" {
		out.TimezoneAttribute = DefaultTimezoneAttribute
	}
	return out
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Zones returns how the snapshot resolves the time zone "agent".
func (s Snapshot) Zones(serverDefault string) windows.Zones {
	return windows.Zones{Attribute: s.TimezoneAttribute, PolicyDefault: s.DefaultTimezone, ServerDefault: serverDefault}
}
