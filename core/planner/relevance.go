package planner

import (
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// fromRef is where an agent starts: its desired hash or its version.
func fromRef(k policy.Kind, a agent.Agent) string {
	if k == policy.KindVersion {
		return a.ServiceVersion
	}
	return a.DesiredHash
}

// relevant: a configuration agent whose desired hash is set and differs from
// the assigned one; a version agent whose version differs from the target
// (the caller checks that the executor is not none and a target exists).
func relevant(k policy.Kind, a agent.Agent, target string) bool {
	if k == policy.KindVersion {
		return a.ServiceVersion != target
	}
	return a.DesiredHash != "" && a.DesiredHash != target
}

// exclusion is why a relevant agent gets no target.
type exclusion int

const (
	included               exclusion = iota
	excludedFailed                   // failed or rolled_back: only a new target or retry-failed starts it again
	excludedStopped                  // cancelled or skipped in an aborted, rolling_back or rolled_back rollout
	excludedCatchUp                  // skipped in a completed configuration rollout: catch-up, no rollout
	excludedOfflineNotBack           // version skipped by offlineGracePeriod, not connected since
)

// code is the Exclusion code of an exclusion rule.
func (e exclusion) code() string {
	switch e {
	case excludedFailed:
		return ExcludedFailed
	case excludedStopped:
		return ExcludedStopped
	case excludedCatchUp:
		return ExcludedCatchUp
	case excludedOfflineNotBack:
		return ExcludedOfflineNotBack
	}
	return ""
}

// exclude applies the exclusion rules to the agent's last target for this
// target. A target of another hash or version excludes nothing; one
// cancelled because its rollout was superseded excludes nothing either.
func exclude(k policy.Kind, a agent.Agent, last *LastTarget, target string) exclusion {
	if last == nil || last.Target.ToRef != target {
		return included
	}
	t := last.Target
	switch t.Status {
	case rollout.TargetFailed, rollout.TargetRolledBack:
		return excludedFailed
	case rollout.TargetCancelled:
		if stopped(last.RolloutStatus) {
			return excludedStopped
		}
	case rollout.TargetSkipped:
		// A target skipped (offline beyond the grace, or moved away) in a
		// rollout that an operator or the failure policy stopped is treated
		// like a cancelled one: otherwise the rejected change reaches these
		// agents on the next run, or when they reconnect.
		if stopped(last.RolloutStatus) {
			return excludedStopped
		}
		if k == policy.KindConfig && last.RolloutStatus == rollout.Completed {
			return excludedCatchUp
		}
		if k == policy.KindVersion && t.ReasonCode == engine.SkipOffline && !connectedSince(a, t) {
			return excludedOfflineNotBack
		}
	}
	return included
}

// stopped: the rollout was stopped or rolled back on purpose.
func stopped(s rollout.Status) bool {
	return s == rollout.Aborted || s == rollout.RollingBack || s == rollout.RolledBack
}

func connectedSince(a agent.Agent, t rollout.Target) bool {
	return t.FinishedAt != nil && a.ConnectedAt.After(*t.FinishedAt)
}
