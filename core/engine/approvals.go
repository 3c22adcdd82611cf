package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

// awaitApproval parks wave w until enough distinct operators approved it,
// or its approval expires (policy approvals.expiry from the moment it began
// to wait): an expiry stops the wave like a rejection, and onFailure
// applies. It reports false: the walk stops at this wave.
func (e *evaluation) awaitApproval(w int) bool {
	wave := &e.r.Waves[w]
	if wave.Status != rollout.WaveWaitingApproval {
		wave.Status, wave.WaitingSince = rollout.WaveWaitingApproval, timePtr(e.now)
		e.emit(rollout.EventWaitingApproval, fmt.Sprintf("wave %d %q requires approval", w, wave.Name))
	}
	if wave.WaitingSince == nil { // waiting since before approvals expired
		wave.WaitingSince = timePtr(e.now)
	}
	if e.approvalExpired(*wave) {
		expiry := e.r.Policy.Approvals.Expiry
		wave.Rejected = &rollout.Decision{By: ExpiredBy, At: e.now, Reason: ExpiredReason}
		reason := fmt.Sprintf("the approval of wave %d %q expired after %s (%d of %d approvals)", w, wave.Name, expiry, len(wave.Approvals), e.required())
		e.emit(rollout.EventApprovalExpired, reason)
		e.failApproval(w, reason)
		return false
	}
	e.dl.at(wave.WaitingSince.Add(e.r.Policy.Approvals.Expiry))
	e.r.Status = rollout.WaitingApproval
	e.r.StatusReason = e.approvalReason(w)
	return false
}

// approvalBetween reports whether wave w follows a wave that
// approvalsBetween names, with nothing but skipped (empty) waves between
// them: the approval guards the next wave that has targets, so an empty
// wave does not take it along when it is skipped. Example: canary → eu (no
// agents) → rest with approvalsBetween [canary]: rest waits for approval.
func (e *evaluation) approvalBetween(w int) bool {
	for i := w - 1; i >= 0; i-- {
		if slices.Contains(e.r.Policy.ApprovalsBetween, e.r.Waves[i].Name) {
			return true
		}
		if e.r.Waves[i].Status != rollout.WaveSkipped {
			return false
		}
	}
	return false
}

// ExpiredBy and ExpiredReason are the rejection that an approval's expiry
// records on its wave.
const (
	ExpiredBy     = "system"
	ExpiredReason = "expired"
)

// StoppedByExpiry reports whether wave w was stopped by the expiry of its
// approval (and not reopened since: resume and retry-failed clear it).
func StoppedByExpiry(w rollout.Wave) bool {
	d := w.Rejected
	return d != nil && d.By == ExpiredBy && d.ActorID == "" && d.Reason == ExpiredReason
}

func (e *evaluation) approvalExpired(w rollout.Wave) bool {
	expiry := e.r.Policy.Approvals.Expiry
	return expiry > 0 && w.WaitingSince != nil && !e.now.Before(w.WaitingSince.Add(expiry))
}

// required is approvals.required, at least 1 (rollouts stored before the
// field existed have 0).
func (e *evaluation) required() int { return max(e.r.Policy.Approvals.Required, 1) }

func (e *evaluation) approvalReason(w int) string {
	wave := e.r.Waves[w]
	if n := e.required(); n > 1 {
		return fmt.Sprintf("wave %d %q waits for approval (%d of %d)", w, wave.Name, len(wave.Approvals), n)
	}
	return fmt.Sprintf("wave %d %q waits for approval", w, wave.Name)
}

// failApproval stops wave w after a rejection or an expiry: the wave fails,
// nothing of it starts, and onFailure applies. A rejection judges what ran
// before it, so rollback-wave returns the last stage (or wave) that ran
// before w (a skipped wave did not run), and rollback-all that one and
// every passed one before it.
func (e *evaluation) failApproval(w int, reason string) {
	e.stopWave(w, e.lastUnitBefore(w), reason)
}

// lastUnitBefore is the last stage, or without stages the last wave, that
// ran before wave w; -1 when none did (the rollback then finds nothing to
// return).
func (e *evaluation) lastUnitBefore(w int) int {
	if len(e.r.Stages) > 0 {
		for s := len(e.r.Stages) - 1; s >= 0; s-- {
			if st := e.r.Stages[s]; st.Wave < w && st.StartedAt != nil {
				return s
			}
		}
		return -1
	}
	for i := w - 1; i >= 0; i-- {
		if e.r.Waves[i].StartedAt != nil {
			return i
		}
	}
	return -1
}

// ApprovalDeadline is when the approval of a waiting wave expires.
func ApprovalDeadline(r rollout.Rollout, w rollout.Wave) *time.Time {
	if w.WaitingSince == nil || r.Policy.Approvals.Expiry <= 0 {
		return nil
	}
	t := w.WaitingSince.Add(r.Policy.Approvals.Expiry)
	return &t
}
