package progress

import (
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// FollowLimit is how long after a target failed its progress may keep
// following an updater that still runs its health check or rollback.
const FollowLimit = 15 * time.Minute

// Derive computes the progress of a version target on a tick from the stored
// progress, the target and its agent. It returns nil for a target that has not
// started in its current attempt, and prev itself when nothing changed, so
// that next == prev means no write is needed. Rules:
//   - the target status has the last word (settle);
//   - an updater attempt counts only when it belongs to the target (belongs);
//   - once the target status is final the progress is frozen, except while a
//     failed target follows the updater's health check or rollback, for at
//     most FollowLimit after the target finished.
func Derive(prev *TargetProgress, t TargetFacts, a agent.Agent, now time.Time) *TargetProgress {
	if t.StartedAt == nil || t.Status == statusPending || t.Status == statusWaitingWindow {
		return nil
	}
	if prev != nil && prev.Attempt != t.Attempt {
		prev = nil // the progress of an earlier attempt says nothing of this one
	}
	if frozen(prev, t.Status) {
		return prev
	}
	next := derive(prev, t, a, now)
	if same(prev, next) {
		return prev
	}
	next.UpdatedAt = now
	return next
}

// frozen reports whether prev was already derived with the final status of
// the target and follows the host no more. A new final status (succeeded, then
// rolled_back by a rollback of the rollout) is derived once more.
func frozen(prev *TargetProgress, status string) bool {
	if prev == nil || !finalStatus(status) || prev.Following() {
		return false
	}
	return prev.Phase == statusPhase(status) || (status == statusFailed && prev.Phase == PhaseRolledBack)
}

func derive(prev *TargetProgress, t TargetFacts, a agent.Agent, now time.Time) *TargetProgress {
	o := observe(t, a)
	if prev.Following() && !o.matched {
		// The host moved on: end the following with what it showed last.
		o = observation{source: prev.Source, phase: prev.Phase, steps: cloneSteps(prev.Steps),
			downloadPercent: prev.DownloadPercent, err: prev.Error}
	}
	p := &TargetProgress{Phase: o.phase, Source: o.source, Steps: o.steps, DownloadPercent: o.downloadPercent,
		Error: o.err, Attempt: t.Attempt, FromVersion: t.FromVersion, ToVersion: t.ToVersion}
	if t.RollbackAt != nil && (t.Status == statusRolledBack || !finalStatus(t.Status)) {
		rollingBack(p, prev, t)
		if t.Status != statusRolledBack {
			return p
		}
	}
	settle(p, o, prev, t, now)
	return p
}

// settle gives the target status the last word. Once verified (the collector
// reports the version) the steps before health_wait are done, unless a failed
// target follows or followed the updater's health check or rollback, whose
// steps stay as the host showed them. verifying is the health wait; succeeded
// marks every step done; the other final statuses resolve the running steps.
func settle(p *TargetProgress, o observation, prev *TargetProgress, t TargetFacts, now time.Time) {
	end := now
	if t.FinishedAt != nil {
		end = *t.FinishedAt
	}
	if t.VerifiedAt != nil && !(t.Status == statusFailed && (o.busy || prev.Following())) {
		verifiedSteps(p.Steps, t.VerifiedAt)
	}
	switch t.Status {
	case statusInProgress:
		return
	case statusVerifying:
		p.Phase = PhaseHealthWait
		return
	}
	p.Phase = statusPhase(t.Status)
	switch t.Status {
	case statusSucceeded:
		for i := range p.Steps {
			finish(&p.Steps[i], StepPending, StepDone, nil)
			finish(&p.Steps[i], StepFailed, StepDone, nil)
		}
	case statusFailed:
		if p.Error == "" {
			p.Error = t.Reason
		}
		if o.rolledBack {
			p.Phase = PhaseRolledBack // a host-side rollback; health_wait is skipped already
		}
		finish(step(p.Steps, PhaseHealthWait), StepRunning, StepFailed, &end)
		if until, ok := followUntil(o, prev, end, now); ok {
			p.FollowUntil = &until
			return // the host's steps keep running as it reports them
		}
	case statusRolledBack:
		if step(p.Steps, PhaseRollingBack) == nil {
			p.Steps = insertRollingBack(p.Steps, Step{Name: PhaseRollingBack, Status: StepRunning, StartedAt: t.RollbackAt})
		}
		finish(step(p.Steps, PhaseRollingBack), StepRunning, StepDone, &end)
		finish(step(p.Steps, PhaseHealthWait), StepPending, StepSkipped, nil)
		finish(step(p.Steps, PhaseHealthWait), StepRunning, StepSkipped, &end)
	}
	for i := range p.Steps {
		finish(&p.Steps[i], StepRunning, runningBecomes(t.Status), &end)
	}
}

// verifiedSteps marks the steps before health_wait done: the collector
// reported the target version at verifiedAt, so the update got past them.
func verifiedSteps(steps []Step, verifiedAt *time.Time) {
	for i := range steps {
		if s := &steps[i]; s.Name != PhaseHealthWait && s.Name != PhaseRollingBack {
			finish(s, StepPending, StepDone, nil)
			finish(s, StepRunning, StepDone, verifiedAt)
		}
	}
}

// followUntil says until when a failed target follows the updater: while it
// still runs its health check or rollback, for at most FollowLimit after the
// target finished. The deadline is fixed when the following begins.
func followUntil(o observation, prev *TargetProgress, end, now time.Time) (time.Time, bool) {
	if !o.busy {
		return time.Time{}, false
	}
	until := end.Add(FollowLimit)
	if prev.Following() {
		until = *prev.FollowUntil
	}
	return until, now.Before(until)
}

// rollingBack shows a rollback of the rollout: at RollbackAt the engine
// offered the previous version again. The steps of the attempt stay as they
// were shown before; what still ran then was cut short.
func rollingBack(p *TargetProgress, prev *TargetProgress, t TargetFacts) {
	if prev != nil {
		p.Source, p.Steps, p.DownloadPercent, p.Error = prev.Source, cloneSteps(prev.Steps), prev.DownloadPercent, prev.Error
	}
	steps := make([]Step, 0, len(p.Steps)+1)
	for _, s := range p.Steps {
		if s.Name != PhaseRollingBack {
			finish(&s, StepRunning, StepSkipped, t.RollbackAt)
			steps = append(steps, s)
		}
	}
	p.Steps = insertRollingBack(steps, Step{Name: PhaseRollingBack, Status: StepRunning, StartedAt: t.RollbackAt,
		Detail: "rolling back to " + t.FromVersion})
	p.Phase = PhaseRollingBack
}

// insertRollingBack puts the step in its place, just before health_wait.
func insertRollingBack(steps []Step, rb Step) []Step {
	out := make([]Step, 0, len(steps)+1)
	for _, s := range steps {
		if s.Name == PhaseHealthWait {
			out = append(out, rb)
		}
		out = append(out, s)
	}
	return out
}

// finish moves a step with the status from to the status to, and sets its
// end when it has none. A nil step is left alone.
func finish(s *Step, from, to StepStatus, at *time.Time) {
	if s == nil || s.Status != from {
		return
	}
	s.Status = to
	if s.FinishedAt == nil && from == StepRunning {
		s.FinishedAt = at
	}
}

func step(steps []Step, name Phase) *Step {
	for i := range steps {
		if steps[i].Name == name {
			return &steps[i]
		}
	}
	return nil
}

func cloneSteps(steps []Step) []Step { return append([]Step(nil), steps...) }

// same reports whether two progress values agree in everything but
// UpdatedAt, which records when the content last changed.
func same(a, b *TargetProgress) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Phase != b.Phase || a.Source != b.Source || a.DownloadPercent != b.DownloadPercent || a.Error != b.Error ||
		a.Attempt != b.Attempt || a.FromVersion != b.FromVersion || a.ToVersion != b.ToVersion ||
		!sameTime(a.FollowUntil, b.FollowUntil) || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i, s := range a.Steps {
		o := b.Steps[i]
		if s.Name != o.Name || s.Status != o.Status || s.Detail != o.Detail ||
			!sameTime(s.StartedAt, o.StartedAt) || !sameTime(s.FinishedAt, o.FinishedAt) {
			return false
		}
	}
	return true
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
