package engine

import (
	"fmt"
	"slices"
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
	// ActionReject refuses the approval a wave waits for: the wave fails and
	// onFailure applies.
	ActionReject Action = "reject"
)

// Actions lists every operator action (docs/rollouts.md, "Operator actions").
var Actions = []Action{ActionPause, ActionResume, ActionApprove, ActionAbort, ActionRollback, ActionRetryFailed, ActionReject}

// Request is one operator action. Wave is the wave index for approve and
// reject.
type Request struct {
	Action Action
	Wave   int
	Actor  string // as people read it: "Dana Operator"
	// ActorID is the stable identity of the actor (user:<id>); approvals
	// are distinct and self-approval refused by it (Actor when empty).
	ActorID string
	// Creators count as the rollout's creators for the rule of no
	// self-approval beside its createdBy (a GitOps rollout: every actor who
	// applied its revision); the adapter fills them in.
	Creators []string
	Reason   string // of a rejection
	// FreezeOverride bypasses the freezes for the rest of the rollout
	// (resume, approve).
	FreezeOverride bool
}

// Stable codes of refused actions.
const (
	CodeUnknownAction     = "action_unknown"
	CodeNotAllowed        = "action_not_allowed"
	CodeNothingToRetry    = "nothing_to_retry"
	CodeWaveNotFound      = "wave_not_found"
	CodeWaveNotApprovable = "wave_not_waiting_approval"
	CodeWaveApproved      = "wave_already_approved"
	CodeSelfApproval      = "self_approval"
	CodeApprovalExpired   = "approval_expired"
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
	ActionPause:       {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Frozen},
	ActionResume:      {rollout.Paused},
	ActionApprove:     {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused},
	ActionAbort:       {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen, rollout.Failed, rollout.RollingBack},
	ActionRollback:    {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen, rollout.Failed},
	ActionRetryFailed: {rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Failed},
	ActionReject:      {rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused},
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
		return Result{}, refuse(CodeUnknownAction, "unknown action %q; the actions are pause, resume, approve, reject, abort, rollback and retry-failed", req.Action)
	}
	if overrideOnly(req, in.Rollout.Status) {
		p := newPass(in)
		p.overrideFreezes(req)
		return p.result(), nil
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
		p.emit("rollout.resumed", "resumed by "+actorOr(req.Actor))
	case ActionApprove:
		err = p.approve(req)
	case ActionReject:
		err = p.reject(req)
	case ActionAbort:
		p.abort(req.Actor)
	case ActionRollback:
		p.startRollback("rollback requested by " + actorOr(req.Actor))
	case ActionRetryFailed:
		if !p.anythingFailed() {
			return Result{}, refuse(CodeNothingToRetry, "rollout %s has no failed targets, waves or stages to retry; it is %s%s",
				p.r.ID, p.r.Status, nothingToRetryHint(p.r.Status))
		}
		p.retryFailed()
		p.emit("rollout.retried", "failed targets retried by "+actorOr(req.Actor))
	}
	if err != nil {
		return Result{}, err
	}
	if req.FreezeOverride && (req.Action == ActionResume || req.Action == ActionApprove) {
		p.overrideFreezes(req)
	}
	return p.result(), nil
}

// overrideOnly: resume with freezeOverride on a frozen rollout (or a running
// one about to be) only records the override; the evaluation right after it
// starts the stage.
func overrideOnly(req Request, s rollout.Status) bool {
	return req.Action == ActionResume && req.FreezeOverride && (s == rollout.Running || s == rollout.Pending || s == rollout.Frozen)
}

// overrideFreezes bypasses the freezes for the rest of the rollout; the
// first override is kept (and audited by the adapter).
func (p *pass) overrideFreezes(req Request) {
	if p.r.FreezeOverride != nil {
		return
	}
	p.r.FreezeOverride = &rollout.Decision{By: actorOr(req.Actor), ActorID: req.identity(), At: p.now, Reason: req.Reason}
	p.emit("rollout.freeze_override", "freezes bypassed by "+actorOr(req.Actor))
}

func (r Request) identity() string {
	if r.ActorID != "" {
		return r.ActorID
	}
	return r.Actor
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

// reopenFailedWaves runs failed waves again. A failed stage runs again
// too: its bake and gate begin afresh once its targets are final. A wave
// stopped by a rejected or expired approval waits for a new approval.
func (p *pass) reopenFailedWaves() {
	for w := range p.r.Waves {
		wave := &p.r.Waves[w]
		if wave.Status != rollout.WaveFailed {
			continue
		}
		wave.Status, wave.FinishedAt = rollout.WaveRunning, nil
		if wave.Rejected != nil {
			wave.Status, wave.Rejected, wave.Approvals, wave.WaitingSince = rollout.WavePending, nil, nil, nil
		}
	}
	for s := range p.r.Stages {
		if st := &p.r.Stages[s]; st.Status == rollout.StageFailed && p.r.Waves[st.Wave].Status != rollout.WaveFailed {
			st.Status, st.FinishedAt, st.BakeUntil, st.Gate = rollout.StageRunning, nil, nil, nil
			for i := range st.Passes {
				st.Passes[i].Outcome = "" // the pass runs again and finishes anew
				if g := st.Passes[i].Gate; g != nil && st.Passes[i].Cleared <= g.Batch {
					st.Passes[i].Gate = nil // the red batch gate is read again
				}
			}
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

// approve records one approval of wave w, which must be waiting for it:
// not by the rollout's creator, once per actor; the wave is released when
// policy approvals.required distinct actors approved it.
func (p *pass) approve(req Request) error {
	wave, err := p.waitingWave(req.Wave)
	if err != nil {
		return err
	}
	id := req.identity()
	if id != "" && (id == p.r.CreatedBy || slices.Contains(req.Creators, id)) {
		return refuse(CodeSelfApproval, "%s created this rollout and cannot approve it; another operator must approve wave %d %q", actorOr(req.Actor), req.Wave, wave.Name)
	}
	for _, a := range wave.Approvals {
		if a.ActorID == id {
			return refuse(CodeWaveApproved, "wave %d %q is already approved by %s; it needs %d distinct approvers", req.Wave, wave.Name, actorOr(req.Actor), p.required())
		}
	}
	wave.Approvals = append(wave.Approvals, rollout.Decision{By: actorOr(req.Actor), ActorID: id, At: p.now, Reason: req.Reason})
	p.emit("rollout.approved", fmt.Sprintf("wave %d %q approved by %s (%d of %d)", req.Wave, wave.Name, actorOr(req.Actor), len(wave.Approvals), p.required()))
	if len(wave.Approvals) < p.required() {
		p.r.StatusReason = p.approvalReason(req.Wave)
		return nil
	}
	wave.Approved = true
	if p.r.Status == rollout.WaitingApproval {
		p.r.Status, p.r.StatusReason = rollout.Running, ""
	}
	return nil
}

// waitingWave is wave w when it waits for approval; the first approval that
// releases it wins, later ones are refused (the store's conditional write
// makes concurrent ones re-read).
func (p *pass) waitingWave(w int) (*rollout.Wave, error) {
	if w < 0 || w >= len(p.r.Waves) {
		return nil, refuse(CodeWaveNotFound, "the rollout has no wave %d (waves are numbered 0 to %d)", w, len(p.r.Waves)-1)
	}
	wave := &p.r.Waves[w]
	if wave.Approved {
		return nil, refuse(CodeWaveApproved, "wave %d %q is already approved", w, wave.Name)
	}
	if wave.Status != rollout.WaveWaitingApproval {
		return nil, refuse(CodeWaveNotApprovable, "wave %d %q is %s, not waiting_approval", w, wave.Name, wave.Status)
	}
	if p.approvalExpired(*wave) {
		return nil, refuse(CodeApprovalExpired, "the approval of wave %d %q expired at %s", w, wave.Name, wave.WaitingSince.Add(p.r.Policy.Approvals.Expiry).UTC().Format(time.RFC3339))
	}
	return wave, nil
}

// reject refuses the approval wave w waits for: the wave fails and
// onFailure applies (pause, or a rollback).
func (p *pass) reject(req Request) error {
	wave, err := p.waitingWave(req.Wave)
	if err != nil {
		return err
	}
	wave.Rejected = &rollout.Decision{By: actorOr(req.Actor), ActorID: req.identity(), At: p.now, Reason: req.Reason}
	reason := fmt.Sprintf("wave %d %q rejected by %s", req.Wave, wave.Name, actorOr(req.Actor))
	if req.Reason != "" {
		reason += ": " + req.Reason
	}
	p.emit("rollout.rejected", reason)
	p.failApproval(req.Wave, reason)
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
	p.r.EndPasses(p.ts, p.now)
	p.r.Status = rollout.Aborted
	p.r.StatusReason = "aborted by " + actorOr(actor)
	p.r.FinishedAt = timePtr(p.now)
	p.r.EndOpenWaves(p.now)
	p.emit("rollout.aborted", p.r.StatusReason)
}

// anythingFailed reports whether retry-failed has something to run again:
// a failed target, or a failed wave or stage (a rejected approval, a red
// gate), which fail without a failed target. Without one, retry-failed
// would only change the rollout's status, a resume under another name.
func (p *pass) anythingFailed() bool {
	for _, t := range p.ts {
		if t.Status == rollout.TargetFailed {
			return true
		}
	}
	for _, w := range p.r.Waves {
		if w.Status == rollout.WaveFailed {
			return true
		}
	}
	for _, st := range p.r.Stages {
		if st.Status == rollout.StageFailed {
			return true
		}
	}
	return false
}

// nothingToRetryHint names the action that does what the operator may have
// meant instead.
func nothingToRetryHint(s rollout.Status) string {
	switch s {
	case rollout.Paused:
		return "; resume continues it"
	case rollout.Failed:
		return "; rollback or abort ends it"
	}
	return ""
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
		p.reopenStageOf(*t)
	}
	p.reopenFailedWaves()
	p.r.Status = rollout.Running
	p.r.StatusReason = ""
	p.r.PausedByThreshold = false
}

// reopenStageOf runs the stage of a retried target again when it had
// passed or was baking (its failure stayed below the threshold): the stage
// is running until the target is final, then bakes and reads its gate
// anew, and the target's pass will gain a new outcome. A failed stage is
// reopened by reopenFailedWaves.
func (p *pass) reopenStageOf(t rollout.Target) {
	if t.Stage >= len(p.r.Stages) {
		return
	}
	st := &p.r.Stages[t.Stage]
	if st.Status != rollout.StagePassed && st.Status != rollout.StageBaking {
		return
	}
	st.Status, st.BakeUntil, st.FinishedAt = rollout.StageRunning, nil, nil
	if t.Pass < len(st.Passes) {
		st.Passes[t.Pass].Outcome = ""
	}
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
