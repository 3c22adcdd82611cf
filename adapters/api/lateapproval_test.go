package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// expiringRollout applies the fixture with approvals.expiry 1h and
// onFailure, lets the canary through and returns the rollout and when
// wave 1 began to wait.
func (h *harness) expiringRollout(onFailure string) (string, time.Time) {
	h.t.Helper()
	id := h.applyFiles(filesWithPolicy(policyWith("  approvals: {expiry: 1h}\n  onFailure: " + onFailure + "\n")))
	h.throughCanary(id)
	return id, h.clock()
}

// wantLate fails unless action on wave 1 is refused as late, with the
// deadline in the detail, the store unchanged and the refusal audited.
func wantLate(t *testing.T, h *harness, id, action string, deadline time.Time) Problem {
	t.Helper()
	before, audits := h.store.snapshot(), h.store.auditLen()
	p := wantProblem(t, h.do(as(post(actionPath(id, action), RoleOperator, `{"wave": "rest"}`), samToken)), http.StatusConflict, CodeApprovalExpired)
	if want := `the approval of wave 1 "rest" expired at ` + deadline.UTC().Format(time.RFC3339); !strings.HasPrefix(p.Detail, want) {
		t.Errorf("%s: detail %q, want it to begin %q", action, p.Detail, want)
	}
	if h.store.snapshot() != before || h.store.auditLen() != audits+1 {
		t.Errorf("%s: a late decision changed the store, or was not audited once", action)
	}
	if e := h.store.lastAudit(); e.Action != "rollout."+action || e.Result != audit.ResultFailure || e.Details["code"] != CodeApprovalExpired {
		t.Errorf("%s: audit %+v, want a failure with code approval_expired", action, e)
	}
	return p
}

// An approval or a rejection after approvals.expiry is told that it came
// late (409 approval_expired), whatever the engine did about the expiry:
// not seen yet (the wave still waits), or seen, when onFailure paused the
// rollout or rolled it back; also once the rollback is over.
func TestApprove_LateIsApprovalExpiredWhateverOnFailureDid(t *testing.T) {
	for _, c := range []struct {
		name, onFailure string
		noticed         bool           // a pass saw the expiry
		rolledBack      bool           // and the rollback finished
		status          rollout.Status // after the pass
		detail          string         // what the detail says beyond the deadline
	}{
		{name: "pause, not noticed", onFailure: "pause", status: rollout.WaitingApproval},
		{name: "rollback, not noticed", onFailure: "rollback", status: rollout.WaitingApproval},
		{name: "pause, noticed", onFailure: "pause", noticed: true, status: rollout.Paused,
			detail: "the expiry stopped the wave; the rollout is paused (resume asks for the approval again)"},
		{name: "rollback, noticed", onFailure: "rollback", noticed: true, status: rollout.RollingBack,
			detail: "the expiry stopped the wave; the rollout is rolling_back"},
		{name: "rollback-wave, noticed", onFailure: "rollback-wave", noticed: true, status: rollout.RollingBack,
			detail: "the expiry stopped the wave; the rollout is rolling_back"},
		{name: "rollback, rolled back", onFailure: "rollback", noticed: true, rolledBack: true, status: rollout.RolledBack,
			detail: "the expiry stopped the wave; the rollout is rolled_back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			id, since := h.expiringRollout(c.onFailure)
			deadline := since.Add(time.Hour)
			h.advance(time.Hour + 500*time.Millisecond)
			if c.noticed {
				h.pass(id)
			}
			if c.rolledBack {
				h.applyConfig("e1") // the canary reports its old configuration again
				h.pass(id)
			}
			if r := h.rollout(id); r.Status != c.status {
				t.Fatalf("rollout %s (%s), want %s", r.Status, r.StatusReason, c.status)
			}
			if c.noticed {
				if d := h.rollout(id).Waves[1].Rejected; d == nil || d.By != "system" || d.Reason != "expired" {
					t.Fatalf("wave 1 rejected %+v, want the system's expiry", d)
				}
			}
			for _, action := range []string{"approve", "reject"} {
				p := wantLate(t, h, id, action, deadline)
				if !strings.Contains(p.Detail, c.detail) {
					t.Errorf("%s: detail %q, want %q", action, p.Detail, c.detail)
				}
			}
		})
	}
}

// The other refusals of approve and reject stay as they were: a wave that
// never waited, one a person rejected (under pause the wave no longer
// waits; under rollback the rollout no longer takes approvals), one
// approved; a resumed wave that waits anew takes an approval.
func TestApprove_RefusalsThatAreNotLate(t *testing.T) {
	t.Run("a wave that never waited", func(t *testing.T) {
		h := newHarness(t)
		id, _ := h.expiringRollout("pause")
		h.advance(2 * time.Hour)
		h.pass(id)
		wantProblem(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 0}`)), http.StatusConflict, CodeWaveNotApprovable)
	})
	for _, c := range []struct {
		onFailure string
		code      string
	}{
		{onFailure: "pause", code: CodeWaveNotApprovable},
		{onFailure: "rollback", code: CodeActionNotAllowed},
	} {
		t.Run("rejected by a person, "+c.onFailure, func(t *testing.T) {
			h := newHarness(t)
			id, _ := h.expiringRollout(c.onFailure)
			wantOK(t, h.do(post(actionPath(id, "reject"), RoleOperator, `{"wave": 1}`)))
			h.advance(2 * time.Hour) // past the expiry the wave no longer had
			h.pass(id)
			for _, action := range []string{"approve", "reject"} {
				wantProblem(t, h.do(as(post(actionPath(id, action), RoleOperator, `{"wave": 1}`), samToken)), http.StatusConflict, c.code)
			}
		})
	}
	t.Run("approved in time", func(t *testing.T) {
		h := newHarness(t)
		id, _ := h.expiringRollout("pause")
		wantOK(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`)))
		h.advance(2 * time.Hour)
		h.pass(id)
		wantProblem(t, h.do(as(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`), samToken)), http.StatusConflict, CodeWaveApproved)
	})
	t.Run("expired, resumed, approved", func(t *testing.T) {
		h := newHarness(t)
		id, _ := h.expiringRollout("pause")
		h.advance(2 * time.Hour)
		h.pass(id)
		wantOK(t, h.do(post(actionPath(id, "resume"), RoleOperator, "")))
		if v := decode[rolloutView](t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`))); !v.Waves[1].Approved {
			t.Errorf("the approval of the new wait: wave 1 %s, not approved", v.Waves[1].Status)
		}
	})
}

// lateApproval answers approve and reject of a wave stopped by its expiry,
// and nothing else.
func TestLateApproval(t *testing.T) {
	since := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	expired := func(st rollout.Status) rollout.Rollout {
		r := rollout.Rollout{ID: "r-1", Status: st, Waves: []rollout.Wave{{Name: "canary"}, {Name: "rest", Status: rollout.WaveFailed,
			WaitingSince: &since, Rejected: &rollout.Decision{By: "system", At: since.Add(time.Hour + time.Second), Reason: "expired"}}}}
		r.Policy.Approvals.Expiry = time.Hour
		return r
	}
	person := expired(rollout.Paused)
	person.Waves[1].Rejected = &rollout.Decision{By: "Dana Operator", ActorID: "user:dana", At: since, Reason: "expired"}
	noWait := expired(rollout.Paused)
	noWait.Waves[1].WaitingSince = nil
	approve := engine.Request{Action: engine.ActionApprove, Wave: 1}
	for _, c := range []struct {
		name   string
		r      rollout.Rollout
		req    engine.Request
		code   string // of the refusal the engine gave
		detail string // "": not late
	}{
		{name: "approve, paused", r: expired(rollout.Paused), req: approve, code: CodeWaveNotApprovable,
			detail: `the approval of wave 1 "rest" expired at 2026-12-01T10:00:00Z; the expiry stopped the wave; the rollout is paused (resume asks for the approval again)`},
		{name: "reject, rolling back", r: expired(rollout.RollingBack), req: engine.Request{Action: engine.ActionReject, Wave: 1}, code: CodeActionNotAllowed,
			detail: `the approval of wave 1 "rest" expired at 2026-12-01T10:00:00Z; the expiry stopped the wave; the rollout is rolling_back`},
		{name: "aborted since", r: expired(rollout.Aborted), req: approve, code: CodeActionNotAllowed,
			detail: `the approval of wave 1 "rest" expired at 2026-12-01T10:00:00Z; the expiry stopped the wave; the rollout is aborted`},
		{name: "no waitingSince: the expiry's time", r: noWait, req: approve, code: CodeWaveNotApprovable,
			detail: `the approval of wave 1 "rest" expired at 2026-12-01T10:00:01Z; the expiry stopped the wave; the rollout is paused (resume asks for the approval again)`},
		{name: "rejected by a person", r: person, req: approve, code: CodeWaveNotApprovable},
		{name: "another wave", r: expired(rollout.Paused), req: engine.Request{Action: engine.ActionApprove, Wave: 0}, code: CodeWaveNotApprovable},
		{name: "no such wave", r: expired(rollout.Paused), req: engine.Request{Action: engine.ActionApprove, Wave: 7}, code: CodeWaveNotApprovable},
		{name: "another action", r: expired(rollout.RollingBack), req: engine.Request{Action: engine.ActionRollback}, code: CodeActionNotAllowed},
		{name: "another refusal", r: expired(rollout.Paused), req: approve, code: CodeSelfApproval},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := lateApproval(c.r, c.req, c.code)
			switch {
			case c.detail == "" && p != nil:
				t.Errorf("late %+v, want the engine's refusal", p)
			case c.detail != "" && (p == nil || p.Code != CodeApprovalExpired || p.Status != http.StatusConflict || p.Detail != c.detail):
				t.Errorf("late %+v, want 409 approval_expired: %s", p, c.detail)
			}
		})
	}
}
