package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The topology fields split a wave into stages, passes and batches by the
// region and zone of its agents (docs/policy.md, "Regions and zones").

// Split is how a wave is split: by region or by zone.
type Split string

const (
	SplitRegion Split = "region"
	SplitZone   Split = "zone"
	// SplitAZ is accepted as a synonym of zone (the usual name of a cloud
	// availability zone); the snapshot holds zone.
	SplitAZ Split = "az"
)

// OpenTelemetry resource attributes that name an agent's region and zone
// when a policy names no others.
const (
	DefaultRegionAttribute = "cloud.region"
	DefaultZoneAttribute   = "cloud.availability_zone"
	DefaultHostAttribute   = "host.name"
)

// MaxBake is the longest bake of a stage: a rollout that waits longer
// between stages is better split into two rollouts.
const MaxBake = 24 * time.Hour

// DefaultMaxUnavailable is the batch size of the passes of a wave with by
// when neither the wave nor the rollout sets maxUnavailable.
var DefaultMaxUnavailable = Amount{Value: 1}

// Topology names the agent attributes that hold the region and the zone.
type Topology struct {
	RegionAttribute string `json:"regionAttribute,omitempty"`
	ZoneAttribute   string `json:"zoneAttribute,omitempty"`
	HostAttribute   string `json:"hostAttribute,omitempty"` // the {host} of probes
}

// Amount is a number of targets (Percent false) or a percentage of the
// targets of a pass (Percent true). The zero Amount means "not set".
type Amount struct {
	Value   int
	Percent bool
}

// IsZero reports whether the amount is not set (for omitzero).
func (a Amount) IsZero() bool { return a == Amount{} }

// Of is the batch size of a pass of total targets: Value, or
// floor(Value × total / 100) for a percentage, and at least 1. An unset
// amount is the whole pass: one batch, as before topology existed.
//
//	25% of 10 → 250/100 = 2
//	25% of 3  → 75/100 = 0 → 1
//	100% of 7 → 7
//	3 of 10   → 3
//	unset, 7  → 7
func (a Amount) Of(total int) int {
	n := a.Value
	switch {
	case a.IsZero():
		n = total
	case a.Percent:
		n = a.Value * total / 100
	}
	return max(n, 1)
}

// String is "25%" or "3".
func (a Amount) String() string {
	if a.Percent {
		return strconv.Itoa(a.Value) + "%"
	}
	return strconv.Itoa(a.Value)
}

// ParseAmount reads "3" or "25%". It checks the form only; Validate checks
// the range.
func ParseAmount(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(t, "%")))
	if err != nil {
		return Amount{}, fmt.Errorf("%q is neither a number nor a percentage such as 25%%", s)
	}
	return Amount{Value: n, Percent: pct}, nil
}

// An amount travels in JSON as written in YAML: a number, or a string with a
// percent sign.

func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Percent {
		return json.Marshal(a.String())
	}
	return json.Marshal(a.Value)
}

func (a *Amount) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*a = Amount{Value: n}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("maxUnavailable: want a number or a string such as \"25%%\": %w", err)
	}
	v, err := ParseAmount(s)
	if err == nil && !v.Percent {
		err = fmt.Errorf("%q: a number is written without quotes", s)
	}
	if err != nil {
		return fmt.Errorf("maxUnavailable: %w", err)
	}
	*a = v
	return nil
}

// usesTopology reports whether a wave splits by region or zone; the region
// order and the topology attributes mean something only then.
func usesTopology(ws []Wave) bool {
	for _, w := range ws {
		if w.By != "" {
			return true
		}
	}
	return false
}

// normalize is the split as the snapshot holds it: az becomes zone.
func (s Split) normalize() Split {
	if s == SplitAZ {
		return SplitZone
	}
	return s
}

// effectiveWave fills the topology defaults of one wave for the snapshot.
// maxUnavailable is the wave's, else the rollout's, else 1 for a wave with
// by; a wave without by and without any maxUnavailable keeps it unset, which
// is one batch per pass: a policy without the topology fields behaves as
// before them.
func effectiveWave(w Wave, rolloutMax Amount) Wave {
	w.By = w.By.normalize()
	if w.MaxUnavailable.IsZero() {
		w.MaxUnavailable = rolloutMax
	}
	if w.By != "" {
		if w.ParallelRegions == 0 {
			w.ParallelRegions = 1
		}
		if w.MaxUnavailable.IsZero() {
			w.MaxUnavailable = DefaultMaxUnavailable
		}
	}
	return w
}

// RestWave is the implicit wave rest as topology sees it: no split, the
// rollout's maxUnavailable (unset: one batch).
func (s Snapshot) RestWave() Wave {
	return Wave{Name: RestWaveName, Percent: 100, MaxUnavailable: s.MaxUnavailable}
}

// SplitsWaves reports whether a wave of the snapshot splits by region or
// zone: the rollout then runs in stages, passes and batches.
func (s Snapshot) SplitsWaves() bool { return usesTopology(s.Waves) }
