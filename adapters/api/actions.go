package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// TargetRollout is the audit target type of rollout actions.
const TargetRollout = "rollout"

// rolloutAction applies pause, resume, approve, reject, abort, rollback or
// retry-failed: the Evaluator applies it, evaluates at once and stores; then a
// parked execution is woken. Every decided action is audited as
// rollout.<action>, refusals included.
func (s *server) rolloutAction(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	action := engine.Action(chi.URLParam(r, "action"))
	if !slices.Contains(engine.Actions, action) {
		return 0, nil, problem(http.StatusNotFound, CodeActionUnknown,
			fmt.Sprintf("unknown action %q; the actions are pause, resume, approve, reject, abort, rollback and retry-failed", action))
	}
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	req, wave, pr := actionRequest(r, action)
	if pr != nil {
		return 0, nil, pr
	}
	req.Actor = p.DisplayName // the engine writes it into reasons people read: "paused by Dana Operator"
	req.ActorID = p.Actor
	id := chi.URLParam(r, "id")
	if wave.name != "" {
		ro, err := s.Store.GetRollout(r.Context(), id)
		if err != nil {
			return 0, nil, rolloutError(id, err)
		}
		if req.Wave, pr = wave.resolve(ro); pr != nil {
			e := actionEntry(s.Clock(), p, id, req, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail})
			e.Details["wave"] = clip(wave.name, maxWaveNameChars)
			s.audit(r.Context(), e)
			return 0, nil, pr
		}
	}
	if action == engine.ActionApprove {
		req.Creators = s.creatorsOf(r.Context(), id)
	}
	passed, err := s.Actions.Act(r.Context(), id, req)
	if err != nil {
		pr := actionProblem(id, err)
		if pr == nil {
			return 0, nil, err
		}
		pr = s.orLate(r.Context(), id, req, pr)
		if pr.Code != CodeRolloutNotFound {
			s.audit(r.Context(), actionEntry(s.Clock(), p, id, req, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
		}
		return 0, nil, pr
	}
	ro, err := s.wake(r.Context(), id, fmt.Sprintf("%s by %s", action, p.DisplayName))
	if err != nil {
		return 0, nil, rolloutError(id, err)
	}
	s.audit(r.Context(), actionEntry(s.Clock(), p, id, req, audit.ResultSuccess,
		map[string]any{"status": string(ro.Status), "statusReason": ro.StatusReason}))
	return http.StatusOK, newRolloutDetail(ro, passed.Targets, s.Names), nil
}

// actionRequest reads the body: approve and reject need {"wave": ...}, the
// wave's index or its name (returned as wave, for the caller to resolve
// against the rollout), and take a reason; resume and approve take
// freezeOverride (with a reason); the other actions take no body or an
// empty object.
func actionRequest(r *http.Request, action engine.Action) (engine.Request, waveRef, *Problem) {
	req := engine.Request{Action: action}
	var body struct {
		Wave           json.RawMessage `json:"wave"`
		Reason         string          `json:"reason"`
		FreezeOverride bool            `json:"freezeOverride"`
	}
	switch action {
	case engine.ActionApprove, engine.ActionReject, engine.ActionResume:
	default:
		var none struct{}
		return req, waveRef{}, decodeBody(r, &none, MaxBodyBytes, true)
	}
	if pr := decodeBody(r, &body, MaxBodyBytes, action == engine.ActionResume); pr != nil {
		return req, waveRef{}, pr
	}
	if utf8.RuneCountInString(body.Reason) > selection.MaxReasonChars {
		return req, waveRef{}, badRequest("reason is longer than %d characters", selection.MaxReasonChars)
	}
	req.Reason, req.FreezeOverride = body.Reason, body.FreezeOverride
	if action == engine.ActionReject && body.FreezeOverride {
		return req, waveRef{}, badRequest("freezeOverride goes with resume or approve, not reject")
	}
	given := len(body.Wave) > 0 && string(body.Wave) != "null"
	if action == engine.ActionResume {
		if given {
			return req, waveRef{}, badRequest("resume takes no wave")
		}
		return req, waveRef{}, nil
	}
	if !given {
		return req, waveRef{}, badRequest("wave is required: the index of the wave to %s (from 0) or its name", action)
	}
	wave, pr := parseWaveJSON("wave", body.Wave)
	if pr != nil {
		return req, waveRef{}, pr
	}
	req.Wave = wave.index
	return req, wave, nil
}

// orLate is pr, or approval_expired when pr refuses an approve or reject
// because the wave's expiry stopped it (lateApproval). The rollout is read
// again for it, only for the refusals that can be one.
func (s *server) orLate(ctx context.Context, id string, req engine.Request, pr *Problem) *Problem {
	if req.Action != engine.ActionApprove && req.Action != engine.ActionReject ||
		pr.Code != CodeWaveNotApprovable && pr.Code != CodeActionNotAllowed {
		return pr
	}
	ro, err := s.Store.GetRollout(ctx, id)
	if err != nil {
		return pr
	}
	if late := lateApproval(ro, req, pr.Code); late != nil {
		return late
	}
	return pr
}

// creatorsOf are who count as the creators of a rollout for the rule of no
// self-approval, beside its createdBy: for a GitOps rollout, every actor who
// applied its revision through the API (from the audit log), so that
// re-applying a commit does not make its first applier an approver.
func (s *server) creatorsOf(ctx context.Context, id string) []string {
	ro, err := s.Store.GetRollout(ctx, id)
	if err != nil || !appliedThroughAPI(ro) {
		return nil
	}
	return s.appliers(ctx, ro.Policy.Commit)
}

// appliedThroughAPI reports whether the appliers of a rollout's revision
// count as its creators: a GitOps rollout whose policy names a commit.
func appliedThroughAPI(r rollout.Rollout) bool {
	return r.Origin == rollout.OriginGitOps && r.Policy.Commit != ""
}

// rolloutAppliers are those the rule of no self-approval counts as the creators
// of a rollout beside its createdBy (creatorsOf), as the rollout's detail
// names them: who applied its revision, newest first, when.
func (s *server) rolloutAppliers(ctx context.Context, r rollout.Rollout) []schema.Decision {
	if !appliedThroughAPI(r) {
		return nil
	}
	var out []schema.Decision
	for _, e := range s.applications(ctx, r.Policy.Commit) {
		out = append(out, schema.Decision{By: s.Names.DisplayName(e.Actor), ByActor: e.Actor, At: e.At.UTC()})
	}
	return out
}

// actionProblem maps the refusals of an action to problems; nil means the
// error is not a refusal (500).
func actionProblem(id string, err error) *Problem {
	var refused *engine.RefusedError
	switch {
	case errors.Is(err, enginetask.ErrRolloutNotFound):
		return problem(http.StatusNotFound, CodeRolloutNotFound, fmt.Sprintf("rollout %s does not exist", id))
	case errors.As(err, &refused):
		switch refused.Code {
		case engine.CodeWaveNotFound:
			var l issue.List
			l.Errorf(engine.CodeWaveNotFound, "wave", "%s", refused.Message)
			return unprocessable(CodeWaveNotFound, refused.Message, l)
		case engine.CodeUnknownAction:
			return problem(http.StatusNotFound, CodeActionUnknown, refused.Message)
		}
		return problem(http.StatusConflict, refused.Code, refused.Message) // action_not_allowed, nothing_to_retry, wave_not_waiting_approval, wave_already_approved, self_approval, approval_expired
	case errors.Is(err, rollout.ErrConflict):
		return problem(http.StatusConflict, CodeConflict, fmt.Sprintf("rollout %s kept changing while the action was applied; read it again and retry", id))
	}
	return nil
}

func actionEntry(now time.Time, p Principal, id string, req engine.Request, result string, details map[string]any) audit.Entry {
	if req.Action == engine.ActionApprove || req.Action == engine.ActionReject {
		details["wave"] = req.Wave
	}
	if req.Reason != "" {
		details["reason"] = req.Reason
	}
	if req.FreezeOverride {
		details["freezeOverride"] = true
	}
	return audit.Entry{At: now.UTC(), Actor: p.Actor, Action: "rollout." + string(req.Action), TargetType: TargetRollout,
		TargetID: id, Result: result, Details: details}
}

// wake wakes the execution parked on the rollout after an action, on the
// one path that the state machine tests drive too (execution.Waker).
func (s *server) wake(ctx context.Context, id, why string) (rollout.Rollout, error) {
	return execution.Waker{SFN: s.SFN, Tokens: s.Store, Log: s.Log}.WakeRollout(ctx, id, why)
}

// audit writes entries; a failure is logged and does not change the answer,
// since what was audited has already happened.
func (s *server) audit(ctx context.Context, es ...audit.Entry) {
	if len(es) == 0 {
		return
	}
	if err := s.Store.AppendAudit(ctx, es); err != nil {
		s.Log.ErrorContext(ctx, "write audit entries", "action", es[0].Action, "target", es[0].TargetID, "error", err.Error())
	}
}
