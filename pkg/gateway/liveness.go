package gateway

import (
	"maps"
	"slices"

	"github.com/myriarch/myriarch/pkg/agent"
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
