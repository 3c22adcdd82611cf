package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// AttemptTolerance is how much earlier than the target an updater attempt may
// have begun and still belong to it (clocks of host and server differ).
const AttemptTolerance = 2 * time.Minute

// hostOrder is the fixed order of the steps that happen on the host; the
// optional rolling_back and the server's health_wait follow.
var hostOrder = []Phase{PhaseOffered, PhaseDownloading, PhaseVerifying, PhaseInstalling, PhaseRestarting, PhaseHealthCheck}

// observation is what the host shows of the attempt, before the target
// status has its say.
type observation struct {
	source          Source
	phase           Phase
	steps           []Step
	downloadPercent int
	err             string
	matched         bool // an updater attempt belongs to the target
	busy            bool // the updater still runs its health check or rollback
	rolledBack      bool // the updater ended the attempt with a rollback
}

// observe reads the steps from the best source there is: the executor for
// external updates, the updater's component when the host has one, the OpAMP
// package status otherwise.
func observe(t TargetFacts, a agent.Agent) observation {
	var o observation
	switch {
	case external(t.Executor):
		o = observeExecutor(t)
	case a.Update != nil:
		o = observeUpdater(t, a.Update, a.Package)
	default:
		o = observePackage(t, a.Package)
	}
	o.steps = append(o.steps, healthWaitStep(t, o.rolledBack))
	return o
}

func external(executor string) bool {
	return executor == ExecutorWebhook || executor == ExecutorAWX || executor == ExecutorManual
}

// observeExecutor: the executor was called when the target started; then the
// server waits for the collector to report the version.
func observeExecutor(t TargetFacts) observation {
	offered := offeredStep(t, StepDone)
	offered.FinishedAt = t.StartedAt
	installing := Step{Name: PhaseInstalling, Status: StepRunning, StartedAt: t.StartedAt,
		Detail: "external update, waiting for version " + t.ToVersion}
	return observation{source: SourceExecutor, phase: PhaseInstalling, steps: []Step{offered, installing}}
}

// waitingForHost is an attempt that has not begun: the offer is out.
func waitingForHost(t TargetFacts, source Source) observation {
	steps := []Step{offeredStep(t, StepRunning)}
	for _, name := range hostOrder[1:] {
		steps = append(steps, Step{Name: name, Status: StepPending})
	}
	return observation{source: source, phase: PhaseOffered, steps: steps}
}

func offeredStep(t TargetFacts, status StepStatus) Step {
	return Step{Name: PhaseOffered, Status: status, StartedAt: t.StartedAt, Detail: "offered " + t.ToVersion}
}

// belongs reports whether the updater's attempt is the one of this target:
// the offered version is "v" plus the target version and it began no earlier
// than AttemptTolerance before the target. Example: target started 12:00:00,
// attempt began 11:58:30 → belongs; 11:57:00 → an older attempt.
func belongs(u *agent.UpdateComponent, t TargetFacts) bool {
	return u.Version == "v"+bare(t.ToVersion) && !u.StartedAt.Before(t.StartedAt.Add(-AttemptTolerance))
}

func bare(version string) string { return strings.TrimPrefix(version, "v") }

func observeUpdater(t TargetFacts, u *agent.UpdateComponent, pkg agent.PackageStatus) observation {
	if !belongs(u, t) {
		return waitingForHost(t, SourceUpdater)
	}
	o := observation{source: SourceUpdater, matched: true}
	for _, name := range hostOrder {
		o.steps = append(o.steps, hostStep(name, u.Steps))
	}
	if _, reported := lookup(u.Steps, PhaseOffered); !reported {
		// The offer is the server's; the host took it when its attempt began.
		o.steps[0] = offeredStep(t, StepDone)
		o.steps[0].FinishedAt = timePtr(u.StartedAt)
	}
	passed(o.steps)
	if rb := hostStep(PhaseRollingBack, u.Steps); rb.Status != StepPending {
		o.steps = append(o.steps, rb)
	}
	if bare(pkg.Version) == bare(t.ToVersion) {
		o.downloadPercent = percent(pkg.DownloadPercent)
		if o.steps[1].Status == StepRunning && o.steps[1].Detail == "" {
			o.steps[1].Detail = fmt.Sprintf("%d%%", o.downloadPercent)
		}
	}
	o.phase = hostPhase(Phase(u.Status), o.steps)
	o.err = firstError(o.steps)
	o.busy = u.Status == string(PhaseHealthCheck) || u.Status == string(PhaseRollingBack)
	o.rolledBack = u.Status == string(PhaseRolledBack)
	return o
}

// lookup finds a step:<name> child, keyed with or without its prefix.
func lookup(steps map[string]agent.UpdateStep, name Phase) (agent.UpdateStep, bool) {
	if s, ok := steps[string(name)]; ok {
		return s, true
	}
	s, ok := steps["step:"+string(name)]
	return s, ok
}

func hostStep(name Phase, steps map[string]agent.UpdateStep) Step {
	e, ok := lookup(steps, name)
	s := Step{Name: name, Status: StepStatus(e.Status)}
	switch s.Status {
	case StepRunning:
	case StepDone, StepFailed, StepSkipped:
		s.FinishedAt = timePtr(e.StatusTime)
	default: // absent, or a status this package does not know
		s.Status = StepPending
	}
	if ok && s.Status != StepPending {
		s.StartedAt = timePtr(e.StartedAt)
	}
	if s.Status == StepFailed || s.Status == StepRunning {
		s.Detail = e.LastError
	}
	return s
}

// passed marks the steps before the furthest one the host reached that it
// did not report as done: the attempt got past them (reports are state, a
// missed report does no harm).
func passed(steps []Step) {
	last := -1
	for i, s := range steps {
		if s.Status != StepPending {
			last = i
		}
	}
	for i := 0; i < last; i++ {
		if steps[i].Status == StepPending {
			steps[i].Status = StepDone
		}
	}
}

// hostPhase is the running step; without one, how the attempt ended; else the
// last step reached. A finished rolling_back means the attempt failed, also
// while the component still says rolling_back (the two-step end of a rollback).
func hostPhase(status Phase, steps []Step) Phase {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Status == StepRunning {
			return steps[i].Name
		}
	}
	if status == PhaseRolledBack || status == PhaseFailed {
		return status
	}
	phase := PhaseOffered
	for _, s := range steps {
		if s.Status == StepFailed || s.Name == PhaseRollingBack {
			return PhaseFailed
		}
		if s.Status != StepPending {
			phase = s.Name
		}
	}
	return phase
}

func firstError(steps []Step) string {
	for _, s := range steps {
		if s.Status == StepFailed && s.Detail != "" {
			return s.Detail
		}
	}
	return ""
}

// observePackage maps the OpAMP package status of the target version onto the
// steps: the status names the step reached, the steps before it are done.
func observePackage(t TargetFacts, pkg agent.PackageStatus) observation {
	reached, status := packageStep(pkg.Status)
	if bare(pkg.Version) != bare(t.ToVersion) || reached == PhaseOffered {
		return waitingForHost(t, SourcePackageStatus)
	}
	o := observation{source: SourcePackageStatus, phase: reached, downloadPercent: percent(pkg.DownloadPercent)}
	at := 0
	for i, name := range hostOrder {
		if name == reached {
			at = i
		}
	}
	for i, name := range hostOrder {
		s := Step{Name: name, Status: StepPending}
		switch {
		case i < at:
			s.Status = StepDone
		case i == at:
			s.Status = status
		}
		o.steps = append(o.steps, s)
	}
	o.steps[0] = offeredStep(t, StepDone)
	switch status {
	case StepFailed:
		o.phase, o.err = PhaseFailed, pkg.Error
		o.steps[at].Detail = pkg.Error
	case StepRunning:
		if reached == PhaseDownloading {
			o.steps[at].Detail = fmt.Sprintf("%d%%", o.downloadPercent)
		}
	}
	return o
}

// packageStep is the step that a package status stands for. INSTALLED means
// the package is in place and the collector restarts into it.
func packageStep(status string) (Phase, StepStatus) {
	switch status {
	case agent.PackageDownloading:
		return PhaseDownloading, StepRunning
	case agent.PackageInstalling:
		return PhaseInstalling, StepRunning
	case agent.PackageInstalled:
		return PhaseRestarting, StepRunning
	case agent.PackageInstallFailed:
		return PhaseInstalling, StepFailed
	}
	return PhaseOffered, StepRunning // INSTALL_PENDING or nothing yet
}

func percent(p int) int { return min(max(p, 0), 100) }

// healthWaitStep is the server's health wait, which begins at verifiedAt. A
// host-side rollback skips it.
func healthWaitStep(t TargetFacts, rolledBack bool) Step {
	s := Step{Name: PhaseHealthWait, Status: StepPending}
	if t.VerifiedAt != nil {
		s.Status, s.StartedAt = StepRunning, t.VerifiedAt
	}
	if rolledBack {
		s.Status = StepSkipped
	}
	return s
}

// timePtr returns nil for the zero time: the host did not say.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
