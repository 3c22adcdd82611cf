package engine

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Failure codes stored on failed targets.
const (
	FailApplyFailed    = "apply_failed"    // FAILED config status or INSTALL_FAILED
	FailApplyTimeout   = "apply_timeout"   // no success within applyTimeout
	FailUnhealthy      = "unhealthy"       // an error status or lastError
	FailNotHealthy     = "startup_timeout" // still starting when applyTimeout ran out
	FailOffline        = "offline"         // went offline during the health wait
	FailTargetLost     = "target_lost"     // no longer reports the target
	FailCrashLoop      = "crash_loop"      // fell back to start-up more than once
	FailVersionRestart = "version_restart" // a version update restarted the collector of a config target
	FailExecutor       = "executor_error"  // the executor's Start or Validate failed
	// FailExecutorJob: the update the executor started failed on its side
	// (an AWX job ended failed, error or canceled). Unlike FailExecutor it
	// is a failure of the update, like apply_failed, not of the executor.
	FailExecutorJob = "executor_job_failed"
)

// RestartTolerance is how long a target in verifying waits for the health
// report of the new process before an older report counts.
const RestartTolerance = 2 * time.Minute

// evaluateInFlight evaluates every started, unfinished target of every wave.
// It runs while the rollout is paused or waits for approval too: a target in
// its health wait is evaluated to the end.
func (e *evaluation) evaluateInFlight() {
	for _, t := range e.all.inFlight() {
		switch t.Status {
		case rollout.TargetInProgress:
			e.evaluateInProgress(t)
		case rollout.TargetVerifying:
			e.evaluateVerifying(t)
		}
	}
}

// evaluateInProgress waits for the agent to report success or failure, or
// for the executor to report that its update failed. Offline is no failure
// here: an update restarts the collector. A success the collector reports
// wins over a failure the executor reports in the same evaluation, as it wins
// over INSTALL_FAILED: the version is what counts.
func (e *evaluation) evaluateInProgress(t *rollout.Target) {
	a, ok := e.agent(t.AgentID)
	timeout := t.StartedAt.Add(e.r.Policy.ApplyTimeout)
	if ok {
		if reported, at := successReported(e.r.Kind, *t, a); reported {
			e.verify(t, a, at)
			e.evaluateVerifying(t)
			return
		}
		if msg := applyFailure(e.r.Kind, *t, a); msg != "" {
			e.fail(t, FailApplyFailed, msg)
			return
		}
	}
	if f, ok := e.execFailures[t.AgentID]; ok && t.ExternalRef != "" && f.ExternalRef == t.ExternalRef {
		e.fail(t, FailExecutorJob, f.Reason)
		return
	}
	if !e.now.Before(timeout) {
		e.fail(t, FailApplyTimeout, fmt.Sprintf("no success reported within applyTimeout %s", e.r.Policy.ApplyTimeout))
		return
	}
	if ok && e.r.Kind == policy.KindConfig && a.DesiredHash != t.ToRef {
		// A configuration target is stored started before its desired hash
		// is set (the push follows that write, so every report finds its
		// target in flight). If the set never happened (the task died
		// between the two, or the write failed), it is ordered again here.
		e.order(OrderStart, *t, t.ToRef)
	}
	e.dl.at(timeout)
}

// successReported: APPLIED for the target hash, or service.version equal to
// the target version (or, from an agent that reports no health, the target
// version's package INSTALLED). Success is never reported by an executor.
func successReported(k policy.Kind, t rollout.Target, a agent.Agent) (bool, time.Time) {
	if k == policy.KindVersion {
		if installedPackage(t, a) && a.ServiceVersion != t.ToRef {
			return true, a.Package.Since
		}
		return a.ServiceVersion == t.ToRef, a.VersionSince
	}
	rc := a.RemoteConfig
	return rc.Hash == t.ToRef && rc.Status == agent.ConfigApplied, rc.Since
}

func applyFailure(k policy.Kind, t rollout.Target, a agent.Agent) string {
	if k == policy.KindVersion {
		ps := a.Package
		if ps.Status == agent.PackageInstallFailed && (ps.Version == "" || ps.Version == t.ToRef) && !reportedBefore(ps.Since, t) {
			return "the updater reported INSTALL_FAILED: " + ps.Error
		}
		return ""
	}
	if a.RemoteConfig.Hash == t.ToRef && a.RemoteConfig.Status == agent.ConfigFailed && !reportedBefore(a.RemoteConfig.Since, t) {
		return "the agent reported FAILED for the configuration: " + a.RemoteConfig.Error
	}
	return ""
}

// reportedBefore: a failure reported before this attempt started belongs to
// the attempt before (retry-failed); a report without a time counts.
func reportedBefore(since time.Time, t rollout.Target) bool {
	return t.Attempt > 1 && !since.IsZero() && t.StartedAt != nil && since.Before(*t.StartedAt)
}

func (e *evaluation) verify(t *rollout.Target, a agent.Agent, reportedAt time.Time) {
	t.Status = rollout.TargetVerifying
	t.VerifiedAt = timePtr(e.now)
	if reportedAt.IsZero() || reportedAt.After(e.now) {
		reportedAt = e.now
	}
	t.ReportedAt = timePtr(reportedAt)
	t.VersionAtVerify = a.ServiceVersion
	t.HealthyOnTarget, t.LastHealthy, t.Restarts = false, false, 0
}

// evaluateVerifying applies the health wait: the target succeeds when the agent
// is online, still on the target, healthy, and now - verifiedAt >= healthWait.
// An agent that does not declare ReportsHealth (the opamp-go example agent)
// has no health to judge: it succeeds on its connection and reports alone,
// online and still on the target through the health wait.
func (e *evaluation) evaluateVerifying(t *rollout.Target) {
	a, ok := e.agent(t.AgentID)
	switch {
	case !ok || !e.online(a):
		e.fail(t, FailOffline, "the agent went offline during the health wait")
		return
	case !stillOnTarget(e.r.Kind, *t, a):
		e.fail(t, FailTargetLost, "the agent no longer reports the target "+refNoun(e.r.Kind))
		return
	case e.r.Kind == policy.KindConfig && t.VersionAtVerify != "" && a.ServiceVersion != t.VersionAtVerify:
		e.fail(t, FailVersionRestart, fmt.Sprintf("a version update restarted the collector (%s to %s) during the health wait", t.VersionAtVerify, a.ServiceVersion))
		return
	}
	h := healthJudgement{healthy: true}
	if a.ReportsHealth() {
		h = e.judgeHealth(*t, a.Health)
	}
	if h.failCode != "" {
		e.fail(t, h.failCode, h.reason)
		return
	}
	if e.trackRestarts(t, h) {
		return
	}
	end := t.VerifiedAt.Add(e.r.Policy.HealthWait)
	if h.healthy && !e.now.Before(end) {
		e.succeed(t)
		return
	}
	e.dl.end(end)
	e.dl.at(h.recheck)
}

func refNoun(k policy.Kind) string {
	if k == policy.KindVersion {
		return "version"
	}
	return "configuration"
}

func stillOnTarget(k policy.Kind, t rollout.Target, a agent.Agent) bool {
	if k == policy.KindVersion {
		return a.ServiceVersion == t.ToRef || installedPackage(t, a)
	}
	return a.RemoteConfig.Hash == t.ToRef && a.RemoteConfig.Status != agent.ConfigFailed
}

// installedPackage: an agent that reports no health reported the target
// version's package INSTALLED. Such an agent (the opamp-go example agent)
// may never describe itself with a new service.version, and its package
// status is then all it says of the update. An agent that reports health
// succeeds by its service.version alone: the package may be installed
// without running.
func installedPackage(t rollout.Target, a agent.Agent) bool {
	return !a.ReportsHealth() && a.Package.Status == agent.PackageInstalled && a.Package.Version == t.ToRef
}

// healthJudgement is what the last health report means for a verifying target.
type healthJudgement struct {
	healthy  bool
	startup  bool      // a start-up report of the current process
	recheck  time.Time // when the judgement can change without a new report
	failCode string
	reason   string
}

// judgeHealth applies the restart tolerances. A report older than the success
// report comes from the process that was replaced: for at most
// RestartTolerance it neither fails nor (for versions) succeeds the target.
// Start-up reports (unhealthy, StatusStarting/StatusStopping/no status, no
// lastError) wait for at most applyTimeout; any other unhealthy report fails.
func (e *evaluation) judgeHealth(t rollout.Target, h agent.Health) healthJudgement {
	tolerance := t.VerifiedAt.Add(RestartTolerance)
	stale := t.ReportedAt != nil && h.ReportedAt.Before(*t.ReportedAt) && e.now.Before(tolerance)
	if stale {
		// A config change need not restart the collector, so its last healthy
		// report stands; a version change always replaces the process.
		if h.Healthy && e.r.Kind == policy.KindConfig {
			return healthJudgement{healthy: true}
		}
		return healthJudgement{recheck: tolerance}
	}
	if h.Healthy {
		return healthJudgement{healthy: true}
	}
	if h.StartupReport() {
		limit := t.VerifiedAt.Add(e.r.Policy.ApplyTimeout)
		if !e.now.Before(limit) {
			return healthJudgement{failCode: FailNotHealthy, reason: fmt.Sprintf("the collector was not healthy within applyTimeout %s", e.r.Policy.ApplyTimeout)}
		}
		return healthJudgement{startup: true, recheck: limit}
	}
	reason := "the collector reported unhealthy"
	if h.Status != "" {
		reason += " (" + h.Status + ")"
	}
	if h.LastError != "" {
		reason += ": " + h.LastError
	}
	return healthJudgement{failCode: FailUnhealthy, reason: reason}
}

// trackRestarts detects crash loops of version rollouts: once healthy on the
// new version, a fall back to a start-up report is a restart; one restart is
// allowed (a configuration applied after the update), a second fails.
func (e *evaluation) trackRestarts(t *rollout.Target, h healthJudgement) (failed bool) {
	if e.r.Kind != policy.KindVersion {
		return false
	}
	switch {
	case h.healthy && !t.LastHealthy:
		t.HealthyOnTarget, t.LastHealthy = true, true
	case h.startup && t.LastHealthy:
		t.LastHealthy = false
		t.Restarts++
		if t.Restarts > 1 {
			e.fail(t, FailCrashLoop, fmt.Sprintf("crash loop: the collector restarted %d times after it was healthy on the new version", t.Restarts))
			return true
		}
	}
	return false
}

func (e *evaluation) succeed(t *rollout.Target) {
	t.Status = rollout.TargetSucceeded
	t.FinishedAt = timePtr(e.now)
}

func (e *evaluation) fail(t *rollout.Target, code, reason string) {
	t.Status = rollout.TargetFailed
	t.ReasonCode = code
	t.Reason = reason
	t.FinishedAt = timePtr(e.now)
}
