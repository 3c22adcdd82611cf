package gateway

import (
	"maps"
	"slices"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// EffectiveOnline is whether an agent counts as online at now: its
// connection is open (as last written) and it was heard from within multiple
// heartbeats. The second condition is what takes agents offline when the
// gateway task holding them dies without writing anything. Readers (the
// engine adapter, the API) use this instead of agent.Agent.Online.
// Example: heartbeat 30 s, multiple 3, lastSeen 12:00:00 → online until
// 12:01:30 inclusive, offline from 12:01:30.000000001.
func EffectiveOnline(a agent.Agent, now time.Time, heartbeat time.Duration, multiple int) bool {
	return a.OnlineAt(now, time.Duration(multiple)*heartbeat)
}

// LastSeenEvery is how old the written lastSeen may grow before a report
// that changes nothing else is written anyway: (multiple − 1.5) heartbeats,
// at least 0. It keeps the written lastSeen about one heartbeat clear of the
// liveness limit of EffectiveOnline while writing as seldom as possible.
// Example: heartbeat 30 s, multiple 3 → 45 s: of heartbeats at 0, 30, 60,
// 90 s after a write, the one at 60 s writes (half of the idle reports), so
// the written lastSeen is at most ~60 s old while the agent lives, under the
// 90 s limit with a heartbeat to spare.
func LastSeenEvery(heartbeat time.Duration, multiple int) time.Duration {
	return max(0, time.Duration(2*multiple-3)*heartbeat/2)
}

// sameFacts reports whether two views of an agent carry the same reported
// facts: everything the gateway writes except lastSeen. The desired state
// (DesiredHash, PackageOffer, TargetVersion) and the fleet belong to others
// and are not compared.
func sameFacts(a, b agent.Agent) bool {
	return a.ID == b.ID && maps.Equal(a.Attributes, b.Attributes) &&
		a.Online == b.Online && a.ConnectedAt.Equal(b.ConnectedAt) &&
		sameHealth(a.Health, b.Health) && sameUpdate(a.Update, b.Update) &&
		a.RemoteConfig.Hash == b.RemoteConfig.Hash && a.RemoteConfig.Status == b.RemoteConfig.Status &&
		a.RemoteConfig.Error == b.RemoteConfig.Error && a.RemoteConfig.Since.Equal(b.RemoteConfig.Since) &&
		a.ServiceVersion == b.ServiceVersion && a.VersionSince.Equal(b.VersionSince) &&
		a.Package == b.Package && a.Capabilities == b.Capabilities
}

func sameHealth(a, b agent.Health) bool {
	return a.Healthy == b.Healthy && a.Status == b.Status && a.LastError == b.LastError &&
		a.StartTime.Equal(b.StartTime) && a.ReportedAt.Equal(b.ReportedAt) && sameComponents(a.Components, b.Components)
}

// sameComponents compares two summaries as the store compares them (its
// JSON): an empty list of names is no names.
func sameComponents(a, b *agent.ComponentSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Total == b.Total && a.UnhealthyCount == b.UnhealthyCount && slices.Equal(a.Unhealthy, b.Unhealthy)
}

func sameUpdate(a, b *agent.UpdateComponent) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Version == b.Version && a.From == b.From &&
		a.StartedAt.Equal(b.StartedAt) && maps.EqualFunc(a.Steps, b.Steps, sameStep)
}

func sameStep(a, b agent.UpdateStep) bool {
	return a.Status == b.Status && a.LastError == b.LastError &&
		a.StartedAt.Equal(b.StartedAt) && a.StatusTime.Equal(b.StatusTime)
}
