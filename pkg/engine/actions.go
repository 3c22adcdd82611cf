package engine

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// Action is an operator action on a rollout.
type Action string

const (
	ActionPause       Action = "pause"
	ActionResume      Action = "resume"
	ActionApprove     Action = "approve"
	ActionAbort       Action = "abort"
	ActionRollback    Action = "rollback"
	ActionRetryFailed Action = "retry-failed"
)

// Actions lists every action in the order of the spec's table.
var Actions = []Action{ActionPause, ActionResume, ActionApprove, ActionAbort, ActionRollback, ActionRetryFailed}

// Request is one operator action. Wave is the wave index for approve.
type Request struct {
	Action Action
	Wave   int
	Actor  string
}

// Stable codes of refused actions.
const (
	CodeUnknownAction     = "action_unknown"
	CodeNotAllowed        = "action_not_allowed"
	CodeWaveNotFound      = "wave_not_found"
	CodeWaveNotApprovable = "wave_not_waiting_approval"
	CodeWaveApproved      = "wave_already_approved"
)

// RefusedError says why an action is not allowed; Code is stable for clients.
type RefusedError struct {
	Code    string
	Message string
}

func (e *RefusedError) Error() string { return e.Message }

func refuse(code, format string, args ...any) error {
	return &RefusedError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// allowed lists the statuses from which each action may be taken.
var allowed = map[Action][]rollout.Status{
	ActionPause:       {rollout.Pending, rollout.Running, rollout.WaitingApproval},
	ActionResume:      {rollout.Paused},
	ActionApprove:     {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused},
	ActionAbort:       {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Failed, rollout.RollingBack},
	ActionRollback:    {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Failed},
	ActionRetryFailed: {rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Failed},
}

// Allowed reports whether action may be taken on a rollout in status s.
func Allowed(a Action, s rollout.Status) bool {
	for _, st := range allowed[a] {
		if st == s {
			return true
		}
	}
	return false
}

// Apply carries out an operator action as a pure transition. The state
// machine evaluates the rollout afterwards; Apply only changes what the
// action itself decides.
func Apply(in Input, req Request) (Result, error) {
	sts, known := allowed[req.Action]
	if !known {
		return Result{}, refuse(CodeUnknownAction, "unknown action %q; the actions are pause, resume, approve, abort, rollback and retry-failed", req.Action)
	}
	if !Allowed(req.Action, in.Rollout.Status) {
		return Result{}, refuse(CodeNotAllowed, "cannot %s a rollout that is %s (allowed when %s)", req.Action, in.Rollout.Status, statusList(sts))
	}
	p := newPass(in)
	var err error
	switch req.Action {
	case ActionPause:
		p.r.Status = rollout.Paused
		p.r.StatusReason = "paused by " + actorOr(req.Actor)
		p.r.PausedByThreshold = false
		p.emit("rollout.paused", p.r.StatusReason)
	case ActionResume:
		p.resume()
	case ActionApprove:
		err = p.approve(req.Wave)
	case ActionAbort:
		p.abort(req.Actor)
	case ActionRollback:
		p.startRollback("rollback requested by " + actorOr(req.Actor))
	case ActionRetryFailed:
		p.retryFailed()
	}
	if err != nil {
		return Result{}, err
	}
	return p.result(), nil
}

func actorOr(actor string) string {
	if actor == "" {
		return "an operator"
	}
	return actor
}

func statusList(sts []rollout.Status) string {
	s := ""
	for i, st := range sts {
		if i > 0 {
			s += ", "
		}
		s += string(st)
	}
	return s
}

// resume continues a paused rollout and acknowledges the failures so far:
// each failed attempt is recorded per wave as <agentId>#<attempt> and no
// longer counts toward the threshold. Waves failed by the threshold run again.
func (p *pass) resume() {
	for i := range p.ts {
		t := p.ts[i]
		if t.Status != rollout.TargetFailed {
			continue
		}
		if p.r.AckedFailures == nil {
			p.r.AckedFailures = map[int][]string{}
		}
		if !contains(p.r.AckedFailures[t.Wave], t.AttemptKey()) {
			p.r.AckedFailures[t.Wave] = append(p.r.AckedFailures[t.Wave], t.AttemptKey())
		}
	}
	p.reopenFailedWaves()
	p.r.Status = rollout.Running
	p.r.StatusReason = ""
	p.r.PausedByThreshold = false
}

func (p *pass) reopenFailedWaves() {
	for w := range p.r.Waves {
		if p.r.Waves[w].Status == rollout.WaveFailed {
			p.r.Waves[w].Status = rollout.WaveRunning
			p.r.Waves[w].FinishedAt = nil
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// approve releases wave w, which must be waiting for approval.
func (p *pass) approve(w int) error {
	if w < 0 || w >= len(p.r.Waves) {
		return refuse(CodeWaveNotFound, "the rollout has no wave %d (waves are numbered 0 to %d)", w, len(p.r.Waves)-1)
	}
	wave := &p.r.Waves[w]
	// A wave shows waiting_approval until the engine starts it, so a second
	// approval can arrive in between; the first one wins, the rest are
	// refused (the store's conditional write makes concurrent ones re-read).
	if wave.Approved {
		return refuse(CodeWaveApproved, "wave %d %q is already approved", w, wave.Name)
	}
	if wave.Status != rollout.WaveWaitingApproval {
		return refuse(CodeWaveNotApprovable, "wave %d %q is %s, not waiting_approval", w, wave.Name, wave.Status)
	}
	wave.Approved = true
	if p.r.Status == rollout.WaitingApproval {
		p.r.Status, p.r.StatusReason = rollout.Running, ""
	}
	return nil
}

// abort stops the rollout. Targets that have not started are cancelled; open
// targets that did start are cancelled too, since nothing evaluates an
// aborted rollout any more (version executors get a Cancel).
func (p *pass) abort(actor string) {
	for i := range p.ts {
		t := p.ts[i]
		if !t.Status.Open() {
			continue
		}
		if t.Status == rollout.TargetInProgress && p.r.Kind == policy.KindVersion {
			p.order(OrderCancel, t, t.ToRef)
		}
		p.cancel(i, "cancelled by abort")
	}
	p.r.Status = rollout.Aborted
	p.r.StatusReason = "aborted by " + actorOr(actor)
	p.r.FinishedAt = timePtr(p.now)
	p.r.EndOpenWaves(p.now)
	p.emit("rollout.aborted", p.r.StatusReason)
}

// retryFailed resets failed targets to pending with the next attempt, so a
// new failure of the same agent counts toward the threshold again.
func (p *pass) retryFailed() {
	for i := range p.ts {
		t := &p.ts[i]
		if t.Status != rollout.TargetFailed {
			continue
		}
		t.Status = rollout.TargetPending
		t.Attempt++
		t.Reason, t.ReasonCode = "", ""
		t.StartedAt, t.VerifiedAt, t.ReportedAt, t.FinishedAt = nil, nil, nil, nil
		t.HealthyOnTarget, t.LastHealthy, t.Restarts = false, false, 0
		p.mark(i)
		if w := &p.r.Waves[t.Wave]; w.Status == rollout.WaveCompleted {
			w.Status = rollout.WaveRunning
			w.FinishedAt = nil
		}
	}
	p.reopenFailedWaves()
	p.r.Status = rollout.Running
	p.r.StatusReason = ""
	p.r.PausedByThreshold = false
}

// MarkStartFailed records that the executor's Start (or Validate) failed for
// a target that the engine started.
func MarkStartFailed(t rollout.Target, now time.Time, msg string) rollout.Target {
	t.Status = rollout.TargetFailed
	t.ReasonCode = FailExecutor
	t.Reason = "the executor failed to start the update: " + msg
	t.FinishedAt = &now
	return t
}
