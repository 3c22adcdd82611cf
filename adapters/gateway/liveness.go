package gateway

import (
	"maps"
	"slices"

	"github.com/myriarch/myriarch/core/agent"
)

// sameFacts reports whether two views of an agent carry the same reported
// facts: everything the gateway writes except lastSeen, which moves only
// with them. The desired state
// (DesiredHash, PackageOffer, TargetVersion) and the fleet belong to others
// and are not compared.
func sameFacts(a, b agent.Agent) bool {
	return a.ID == b.ID && maps.Equal(a.Attributes, b.Attributes) &&
		a.Online == b.Online && a.ConnectedAt.Equal(b.ConnectedAt) && a.Task == b.Task &&
		sameHealth(a.Health, b.Health) && sameUpdate(a.Update, b.Update) &&
		a.RemoteConfig.Hash == b.RemoteConfig.Hash && a.RemoteConfig.Status == b.RemoteConfig.Status &&
		a.RemoteConfig.Error == b.RemoteConfig.Error && a.RemoteConfig.Since.Equal(b.RemoteConfig.Since) &&
		a.EffectiveHash == b.EffectiveHash &&
		a.ServiceVersion == b.ServiceVersion && a.VersionSince.Equal(b.VersionSince) &&
		a.Package == b.Package && a.Capabilities == b.Capabilities
}

// deferrable reports whether next differs from prev only in facts that no
// decision of the engine waits for, so that their write may wait for
// LazyWrite: the effective configuration's hash (informational), a remote
// configuration status that became APPLYING (a target waits for APPLIED or
// FAILED), and health that stays healthy or stays in start-up (the flips,
// a restart or its end, and any failure are written at once: the engine
// counts restarts and fails on errors).
func deferrable(prev, next agent.Agent) bool {
	if next.RemoteConfig.Status == agent.ConfigApplying {
		prev.RemoteConfig = next.RemoteConfig
	}
	prev.EffectiveHash = next.EffectiveHash
	if h := next.Health; prev.Health.Healthy == h.Healthy && (h.Healthy || h.StartupReport() && prev.Health.StartupReport()) {
		prev.Health = h
	}
	return sameFacts(prev, next)
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
