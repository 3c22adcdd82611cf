package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
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
		e := newEvaluation(in)
		e.overrideFreezes(req)
		return e.result(), nil
	}
	if !Allowed(req.Action, in.Rollout.Status) {
		return Result{}, refuse(CodeNotAllowed, "cannot %s a rollout that is %s (allowed when %s)", req.Action, in.Rollout.Status, statusList(sts))
	}
	e := newEvaluation(in)
	var err error
	switch req.Action {
	case ActionPause:
		e.r.Status = rollout.Paused
		e.r.StatusReason = "paused by " + actorOr(req.Actor)
		e.r.PausedByThreshold = false
		e.emit(rollout.EventPaused, e.r.StatusReason)
	case ActionResume:
		e.resume()
		e.emit(rollout.EventResumed, "resumed by "+actorOr(req.Actor))
	case ActionApprove:
		err = e.approve(req)
	case ActionReject:
		err = e.reject(req)
	case ActionAbort:
		e.abort(req.Actor)
	case ActionRollback:
		e.startRollback("rollback requested by " + actorOr(req.Actor))
	case ActionRetryFailed:
		if !e.anythingFailed() {
			return Result{}, refuse(CodeNothingToRetry, "rollout %s has no failed targets, waves or stages to retry; it is %s%s",
				e.r.ID, e.r.Status, nothingToRetryHint(e.r.Status))
		}
		e.retryFailed()
		e.emit(rollout.EventRetried, "failed targets retried by "+actorOr(req.Actor))
	}
	if err != nil {
		return Result{}, err
	}
	if req.FreezeOverride && (req.Action == ActionResume || req.Action == ActionApprove) {
		e.overrideFreezes(req)
	}
	return e.result(), nil
}

// overrideOnly: resume with freezeOverride on a frozen rollout (or a running
// one about to be) only records the override; the evaluation right after it
// starts the stage.
func overrideOnly(req Request, s rollout.Status) bool {
	return req.Action == ActionResume && req.FreezeOverride && (s == rollout.Running || s == rollout.Pending || s == rollout.Frozen)
}

// overrideFreezes bypasses the freezes for the rest of the rollout; the
// first override is kept (and audited by the adapter).
func (e *evaluation) overrideFreezes(req Request) {
	if e.r.FreezeOverride != nil {
		return
	}
	e.r.FreezeOverride = &rollout.Decision{By: actorOr(req.Actor), ActorID: req.identity(), At: e.now, Reason: req.Reason}
	e.emit(rollout.EventFreezeOverride, "freezes bypassed by "+actorOr(req.Actor))
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
func (e *evaluation) resume() {
	for _, t := range e.all.withStatus(rollout.TargetFailed) {
		if e.r.AckedFailures == nil {
			e.r.AckedFailures = map[int][]string{}
		}
		if !contains(e.r.AckedFailures[t.Wave], t.AttemptKey()) {
			e.r.AckedFailures[t.Wave] = append(e.r.AckedFailures[t.Wave], t.AttemptKey())
		}
	}
	e.reopenFailedWaves()
	e.r.Status = rollout.Running
	e.r.StatusReason = ""
	e.r.PausedByThreshold = false
}

// reopenFailedWaves runs failed waves again. A failed stage runs again
// too: its bake and gate begin afresh once its targets are final. A wave
// stopped by a rejected or expired approval waits for a new approval.
func (e *evaluation) reopenFailedWaves() {
	for w := range e.r.Waves {
		wave := &e.r.Waves[w]
		if wave.Status != rollout.WaveFailed {
			continue
		}
		wave.Status, wave.FinishedAt = rollout.WaveRunning, nil
		if wave.Rejected != nil {
			wave.Status, wave.Rejected, wave.Approvals, wave.WaitingSince = rollout.WavePending, nil, nil, nil
		}
	}
	for s := range e.r.Stages {
		if st := &e.r.Stages[s]; st.Status == rollout.StageFailed && e.r.Waves[st.Wave].Status != rollout.WaveFailed {
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
func (e *evaluation) approve(req Request) error {
	wave, err := e.waitingWave(req.Wave)
	if err != nil {
		return err
	}
	id := req.identity()
	switch {
	case id == "":
	case id == e.r.CreatedBy:
		return refuse(CodeSelfApproval, "%s created this rollout and cannot approve it; another operator must approve wave %d %q", actorOr(req.Actor), req.Wave, wave.Name)
	case slices.Contains(req.Creators, id):
		return refuse(CodeSelfApproval, "%s applied the revision that created this rollout and cannot approve it; another operator must approve wave %d %q", actorOr(req.Actor), req.Wave, wave.Name)
	}
	for _, a := range wave.Approvals {
		if a.ActorID == id {
			return refuse(CodeWaveApproved, "wave %d %q is already approved by %s; it needs %d distinct approvers", req.Wave, wave.Name, actorOr(req.Actor), e.required())
		}
	}
	wave.Approvals = append(wave.Approvals, rollout.Decision{By: actorOr(req.Actor), ActorID: id, At: e.now, Reason: req.Reason})
	e.emit(rollout.EventApproved, fmt.Sprintf("wave %d %q approved by %s (%d of %d)", req.Wave, wave.Name, actorOr(req.Actor), len(wave.Approvals), e.required()))
	if len(wave.Approvals) < e.required() {
		e.r.StatusReason = e.approvalReason(req.Wave)
		return nil
	}
	wave.Approved = true
	if e.r.Status == rollout.WaitingApproval {
		e.r.Status, e.r.StatusReason = rollout.Running, ""
	}
	return nil
}

// waitingWave is wave w when it waits for approval; the first approval that
// releases it wins, later ones are refused (the store's conditional write
// makes concurrent ones re-read).
func (e *evaluation) waitingWave(w int) (*rollout.Wave, error) {
	if w < 0 || w >= len(e.r.Waves) {
		return nil, refuse(CodeWaveNotFound, "the rollout has no wave %d (waves are numbered 0 to %d)", w, len(e.r.Waves)-1)
	}
	wave := &e.r.Waves[w]
	if wave.Approved {
		return nil, refuse(CodeWaveApproved, "wave %d %q is already approved", w, wave.Name)
	}
	if wave.Status != rollout.WaveWaitingApproval {
		return nil, refuse(CodeWaveNotApprovable, "wave %d %q is %s, not waiting_approval", w, wave.Name, wave.Status)
	}
	if e.approvalExpired(*wave) {
		return nil, refuse(CodeApprovalExpired, "the approval of wave %d %q expired at %s", w, wave.Name, wave.WaitingSince.Add(e.r.Policy.Approvals.Expiry).UTC().Format(time.RFC3339))
	}
	return wave, nil
}

// reject refuses the approval wave w waits for: the wave fails and
// onFailure applies (pause, or a rollback).
func (e *evaluation) reject(req Request) error {
	wave, err := e.waitingWave(req.Wave)
	if err != nil {
		return err
	}
	wave.Rejected = &rollout.Decision{By: actorOr(req.Actor), ActorID: req.identity(), At: e.now, Reason: req.Reason}
	reason := fmt.Sprintf("wave %d %q rejected by %s", req.Wave, wave.Name, actorOr(req.Actor))
	if req.Reason != "" {
		reason += ": " + req.Reason
	}
	e.emit(rollout.EventRejected, reason)
	e.failApproval(req.Wave, reason)
	return nil
}

// abort stops the rollout. Targets that have not started are cancelled; open
// targets that did start are cancelled too, since nothing evaluates an
// aborted rollout any more (version executors get a Cancel).
func (e *evaluation) abort(actor string) {
	open := e.all.filter(func(t *rollout.Target) bool { return t.Status.Open() })
	for _, t := range open {
		if t.Status == rollout.TargetInProgress && e.r.Kind == policy.KindVersion {
			e.order(OrderCancel, *t, t.ToRef)
		}
		e.cancel(t, "cancelled by abort")
	}
	e.r.EndPasses(e.ts, e.now)
	e.r.Status = rollout.Aborted
	e.r.StatusReason = "aborted by " + actorOr(actor)
	e.r.FinishedAt = timePtr(e.now)
	e.r.EndOpenWaves(e.now)
	e.emit(rollout.EventAborted, e.r.StatusReason)
}

// anythingFailed reports whether retry-failed has something to run again:
// a failed target, or a failed wave or stage (a rejected approval, a red
// gate), which fail without a failed target. Without one, retry-failed
// would only change the rollout's status, a resume under another name.
func (e *evaluation) anythingFailed() bool {
	if len(e.all.withStatus(rollout.TargetFailed)) > 0 {
		return true
	}
	for _, w := range e.r.Waves {
		if w.Status == rollout.WaveFailed {
			return true
		}
	}
	for _, st := range e.r.Stages {
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
func (e *evaluation) retryFailed() {
	for _, t := range e.all.withStatus(rollout.TargetFailed) {
		t.Status = rollout.TargetPending
		t.Attempt++
		t.Reason, t.ReasonCode = "", ""
		t.StartedAt, t.VerifiedAt, t.ReportedAt, t.FinishedAt = nil, nil, nil, nil
		t.HealthyOnTarget, t.LastHealthy, t.Restarts = false, false, 0
		if w := &e.r.Waves[t.Wave]; w.Status == rollout.WaveCompleted {
			w.Status = rollout.WaveRunning
			w.FinishedAt = nil
		}
		e.reopenStageOf(*t)
	}
	e.reopenFailedWaves()
	e.r.Status = rollout.Running
	e.r.StatusReason = ""
	e.r.PausedByThreshold = false
}

// reopenStageOf runs the stage of a retried target again when it had
// passed or was baking (its failure stayed below the threshold): the stage
// is running until the target is final, then bakes and reads its gate
// anew, and the target's pass will gain a new outcome. A failed stage is
// reopened by reopenFailedWaves.
func (e *evaluation) reopenStageOf(t rollout.Target) {
	if t.Stage >= len(e.r.Stages) {
		return
	}
	st := &e.r.Stages[t.Stage]
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
