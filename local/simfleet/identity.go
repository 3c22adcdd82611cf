package simfleet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// uidNamespace scopes the name-based instance UIDs of simulated agents.
var uidNamespace = uuid.MustParse("5d0c7a8e-3f51-4b6a-9e2d-7a41c0b3e9f6")

// InstanceUID is the OpAMP instance UID of agent n under seed: a name-based
// UUID (version 5) of "<seed>/<n>", so a restarted simulation reuses it.
func InstanceUID(seed int64, n int) uuid.UUID {
	return uuid.NewSHA1(uidNamespace, fmt.Appendf(nil, "%d/%d", seed, n))
}

// HostName is the host.name of agent n: sim-01, sim-02, ... sim-100.
func HostName(n int) string { return fmt.Sprintf("sim-%02d", n) }

// timezone assigns the zones round robin: agent 1 gets the first.
func (cfg Config) timezone(n int) string { return cfg.Timezones[(n-1)%len(cfg.Timezones)] }

// zone is agent n's region and zone, or empty ones without Zones.
func (cfg Config) zone(n int) (region, zone string) {
	if len(cfg.Zones) == 0 {
		return "", ""
	}
	return splitZone(cfg.Zones[(n-1)%len(cfg.Zones)])
}

// splitZone splits a Zones entry: "eu-west-1/eu-west-1a" → eu-west-1, eu-west-1a.
func splitZone(z string) (region, zone string) {
	region, zone, _ = strings.Cut(z, "/")
	return region, zone
}

// canary reports whether agent n is one of the first CanaryCount agents.
func (cfg Config) canary(n int) bool { return n <= cfg.CanaryCount }

// failing reports whether agent n fails: it is listed in FailAgents, or its
// seeded draw is below FailProbability. The draw has its own stream, so the
// failing set does not depend on the delays.
func (cfg Config) failing(n int) bool {
	if slices.Contains(cfg.FailAgents, n) {
		return true
	}
	return cfg.FailProbability > 0 && rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(n)<<1|1)).Float64() < cfg.FailProbability
}

// jitter is the per-agent source of delay variation.
type jitter struct{ rng *rand.Rand }

func newJitter(seed int64, n int) jitter {
	return jitter{rng: rand.New(rand.NewPCG(uint64(seed), uint64(n)<<1))}
}

// between is uniform in [lo, hi].
func (j jitter) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(j.rng.Int64N(int64(hi-lo)+1))
}

// around varies d by ±25 %: 1 s → 750 ms .. 1.25 s.
func (j jitter) around(d time.Duration) time.Duration { return j.between(d*3/4, d*5/4) }
