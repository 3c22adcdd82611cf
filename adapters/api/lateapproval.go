package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// An approval (or a rejection) that comes after approvals.expiry is told
// that it came late: 409 approval_expired. The engine says so itself while
// the wave still waits (it has not evaluated since the deadline, or the
// rollout was paused meanwhile). Once a pass has applied the expiry, the
// wave is failed and onFailure has moved the rollout on (paused, rolling
// back, rolled back), and the engine's refusal names what is true now
// (wave_not_waiting_approval, action_not_allowed) but not why; the pass
// comes about half a second after the deadline, so approval_expired was
// all but unreachable. The expiry is recorded on the wave (rejected by
// "system", reason "expired", until resume or retry-failed asks for a new
// approval), and that refusal is turned into approval_expired here.

// lateApproval is the problem of an approve or reject of req.Wave that the
// engine refused with code because the wave's approval expired and the
// expiry stopped the wave; nil for every other refusal: a wave that never
// waited, one a person rejected, one approved, another action.
func lateApproval(ro rollout.Rollout, req engine.Request, code string) *Problem {
	if req.Action != engine.ActionApprove && req.Action != engine.ActionReject ||
		code != CodeWaveNotApprovable && code != CodeActionNotAllowed ||
		req.Wave < 0 || req.Wave >= len(ro.Waves) {
		return nil
	}
	w := ro.Waves[req.Wave]
	if !engine.StoppedByExpiry(w) {
		return nil
	}
	at := w.Rejected.At // when the engine saw the expiry: only without waitingSince or expiry, which it always has
	if dl := engine.ApprovalDeadline(ro, w); dl != nil {
		at = *dl
	}
	detail := fmt.Sprintf("the approval of wave %d %q expired at %s; the expiry stopped the wave; the rollout is %s",
		req.Wave, w.Name, at.UTC().Format(time.RFC3339), ro.Status)
	if ro.Status == rollout.Paused {
		detail += " (resume asks for the approval again)"
	}
	return problem(http.StatusConflict, CodeApprovalExpired, detail)
}
