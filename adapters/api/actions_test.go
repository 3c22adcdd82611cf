package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/rollout"
)

func (h *harness) park(id, token string) {
	h.store.Lock()
	defer h.store.Unlock()
	r := h.store.Rollouts[id]
	r.TaskToken = token
	h.store.Rollouts[id] = r
}

func (h *harness) rollout(id string) rollout.Rollout {
	h.t.Helper()
	r, err := h.store.GetRollout(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) setStatus(id string, st rollout.Status) {
	h.store.Lock()
	defer h.store.Unlock()
	r := h.store.Rollouts[id]
	r.Status = st
	h.store.Rollouts[id] = r
}

func TestApprove_ReleasesTheWaveWakesTheExecutionAndAudits(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	h.park(id, "tok-1")
	rep := h.do(post("/api/v1/rollouts/"+id+"/actions/approve", RoleOperator, `{"wave": 1}`))
	wantOK(t, rep)
	v := decode[rolloutView](t, rep)
	if v.Status != rollout.Running || !v.Waves[1].Approved || v.Waves[1].Counts.InProgress != 3 {
		t.Errorf("after approve: status %s, wave 1 approved %v, in progress %d; want running, true, 3 (evaluated at once)",
			v.Status, v.Waves[1].Approved, v.Waves[1].Counts.InProgress)
	}
	if got := h.sfn.wokenTokens(); len(got) != 1 || got[0] != "tok-1" {
		t.Errorf("woken %v, want [tok-1]", got)
	}
	if tok := h.rollout(id).TaskToken; tok != "" {
		t.Errorf("task token %q left after the wake", tok)
	}
	e := h.store.lastAudit()
	if e.Action != "rollout.approve" || e.Actor != operator.Actor || e.Result != audit.ResultSuccess || e.TargetType != "rollout" ||
		e.TargetID != id || e.Details["wave"] != float64(1) || e.Details["status"] != "running" {
		t.Errorf("audit %+v", e)
	}
}

func TestActions_EachTakesEffectAtOnce(t *testing.T) {
	cases := []struct {
		action string
		from   rollout.Status
		want   rollout.Status
	}{
		{action: "pause", from: rollout.Running, want: rollout.Paused},          // stops new starts
		{action: "resume", from: rollout.Paused, want: rollout.WaitingApproval}, // continues; evaluated at once: wave 1 waits for approval
		{action: "abort", from: rollout.WaitingApproval, want: rollout.Aborted}, // stops the rollout
		{action: "rollback", from: rollout.Running, want: rollout.RollingBack},  // returns started targets
	}
	for _, c := range cases {
		t.Run(c.action, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			h.setStatus(id, c.from)
			rep := h.do(post("/api/v1/rollouts/"+id+"/actions/"+c.action, RoleOperator, ""))
			wantOK(t, rep)
			if v := decode[rolloutView](t, rep); v.Status != c.want {
				t.Errorf("status %s, want %s", v.Status, c.want)
			}
			if st := h.rollout(id).Status; st != c.want {
				t.Errorf("stored status %s, want %s", st, c.want)
			}
			if e := h.store.lastAudit(); e.Action != "rollout."+c.action || e.Result != audit.ResultSuccess {
				t.Errorf("audit %s %s, want rollout.%s success", e.Action, e.Result, c.action)
			}
		})
	}
}

func TestPause_ReasonNamesTheOperator(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	v := decode[rolloutView](t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "{}")))
	if v.StatusReason != "paused by Dana Operator" {
		t.Errorf("statusReason %q, want paused by Dana Operator", v.StatusReason)
	}
	if len(h.sfn.wokenTokens()) != 0 {
		t.Errorf("woke %v without a parked execution", h.sfn.wokenTokens())
	}
}

func TestActions_RefusalsAreProblemsAuditedAndChangeNothing(t *testing.T) {
	cases := []struct {
		name, action, body string
		status             int
		code               string
		audited            bool
	}{
		{name: "resume a running rollout", action: "resume", body: "", status: 409, code: CodeActionNotAllowed, audited: true},
		{name: "approve a completed wave", action: "approve", body: `{"wave": 0}`, status: 409, code: CodeWaveNotApprovable, audited: true},
		{name: "approve a wave that does not exist", action: "approve", body: `{"wave": 7}`, status: 422, code: CodeWaveNotFound, audited: true},
		{name: "approve a wave by a name the rollout does not have", action: "approve", body: `{"wave": "canry"}`, status: 400, code: CodeWaveNameUnknown, audited: true},
		{name: "reject a wave by a name the rollout does not have", action: "reject", body: `{"wave": "Rest"}`, status: 400, code: CodeWaveNameUnknown, audited: true},
		{name: "approve a completed wave by its name", action: "approve", body: `{"wave": "canary"}`, status: 409, code: CodeWaveNotApprovable, audited: true},
		{name: "retry-failed with nothing failed", action: "retry-failed", body: "", status: 409, code: CodeNothingToRetry, audited: true},
		{name: "an action that does not exist", action: "explode", body: "", status: 404, code: CodeActionUnknown, audited: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			h.setStatus(id, rollout.Running)
			before, audits := h.store.snapshot(), h.store.auditLen()
			p := wantProblem(t, h.do(post("/api/v1/rollouts/"+id+"/actions/"+c.action, RoleOperator, c.body)), c.status, c.code)
			if h.store.snapshot() != before {
				t.Errorf("a refused action changed the store")
			}
			if got := h.store.auditLen() - audits; (got == 1) != c.audited {
				t.Errorf("%d audit entries written, audited %v", got, c.audited)
			}
			if c.audited {
				if e := h.store.lastAudit(); e.Result != audit.ResultFailure || e.Details["code"] != c.code || e.Details["error"] == "" {
					t.Errorf("audit %+v, want a failure with code %s", e, c.code)
				}
			}
			if c.status == 422 && (len(p.Issues) != 1 || p.Issues[0].Code != CodeWaveNotFound || p.Issues[0].Path != "wave") {
				t.Errorf("issues %+v, want wave_not_found at wave", p.Issues)
			}
			if c.code == CodeWaveNameUnknown && (strings.Join(p.Waves, ",") != "canary,rest" || !strings.Contains(p.Detail, `its waves are 0 "canary", 1 "rest"`)) {
				t.Errorf("waves %v, detail %q: want the rollout's waves listed", p.Waves, p.Detail)
			}
		})
	}
}

func TestActions_MissingRolloutIs404AndNotAudited(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(post("/api/v1/rollouts/r-404/actions/pause", RoleOperator, "")), http.StatusNotFound, CodeRolloutNotFound)
	if n := h.store.auditLen(); n != 0 {
		t.Errorf("%d audit entries for a rollout that does not exist", n)
	}
}

func TestActions_LostRacesPersistingAre409Conflict(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	h.store.Fail("SaveEvaluation", rollout.ErrConflict)
	wantProblem(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")), http.StatusConflict, CodeConflict)
	if e := h.store.lastAudit(); e.Action != "rollout.pause" || e.Result != audit.ResultFailure {
		t.Errorf("audit %+v, want a failed rollout.pause", e)
	}
}

// hookSFN runs hook when it wakes a token, as a real execution resumes.
type hookSFN struct {
	*fakeSFN
	hook func(token string)
}

func (f *hookSFN) SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, opts ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	out, err := f.fakeSFN.SendTaskSuccess(ctx, in, opts...)
	if f.hook != nil {
		f.hook(*in.TaskToken)
	}
	return out, err
}

// The woken execution evaluates and parks again before the API clears the
// token it woke: the new token must survive, or nothing could wake it.
func TestWake_TokenStoredByANewParkSurvives(t *testing.T) {
	woke := &hookSFN{fakeSFN: &fakeSFN{}}
	h := newHarness(t, func(d *Deps) { d.SFN = woke })
	id := h.waitingApproval()
	h.park(id, "tok-1")
	woke.hook = func(string) { h.park(id, "tok-2") }
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/approve", RoleOperator, `{"wave": 1}`)))
	if tok := h.rollout(id).TaskToken; tok != "tok-2" {
		t.Errorf("token %q after the wake, want tok-2 (stored by the new park)", tok)
	}
	if got := woke.wokenTokens(); len(got) != 1 || got[0] != "tok-1" {
		t.Errorf("woken %v, want [tok-1]", got)
	}
}

func TestWake_DeadTokenIsClearedOtherFailuresKeepIt(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // the stored token afterwards
	}{
		{name: "the execution ended", err: &types.TaskDoesNotExist{}, want: ""},    // nothing left to wake
		{name: "the task timed out", err: &types.TaskTimedOut{}, want: ""},         // nothing left to wake
		{name: "throttled", err: errors.New("ThrottlingException"), want: "tok-1"}, // the next action wakes it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			h.park(id, "tok-1")
			h.sfn.err = c.err
			wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/approve", RoleOperator, `{"wave": 1}`)))
			if tok := h.rollout(id).TaskToken; tok != c.want {
				t.Errorf("token %q, want %q", tok, c.want)
			}
		})
	}
}

// The bodies of approve, reject and resume are strict; bad input changes
// nothing and is not audited.
func TestActionBodies_AreStrict(t *testing.T) {
	cases := []struct {
		name, action, body, contentType string
		status                          int
		code                            string
	}{
		{name: "no body", action: "approve", body: "", contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "no wave", action: "approve", body: `{}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "wave as a boolean", action: "approve", body: `{"wave": true}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "wave as an object", action: "approve", body: `{"wave": {"name": "rest"}}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "wave null", action: "approve", body: `{"wave": null}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "wave as an empty name", action: "approve", body: `{"wave": ""}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "wave as a fraction", action: "approve", body: `{"wave": 1.5}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "negative wave", action: "approve", body: `{"wave": -1}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "negative wave as a string", action: "approve", body: `{"wave": "-1"}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "unknown field", action: "approve", body: `{"wave": 1, "force": true}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "two values", action: "approve", body: `{"wave": 1} {"wave": 2}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "malformed", action: "approve", body: `{"wave": `, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "not JSON", action: "approve", body: `wave=1`, contentType: "application/x-www-form-urlencoded", status: 415, code: CodeUnsupportedMediaType},
		{name: "approve with a reason over 500 characters", action: "approve", body: `{"wave": 1, "reason": "` + strings.Repeat("é", 501) + `"}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "reject without a wave", action: "reject", body: `{"reason": "no"}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "reject without a body", action: "reject", body: "", contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "reject with freezeOverride", action: "reject", body: `{"wave": 1, "freezeOverride": true}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "reject with a negative wave", action: "reject", body: `{"wave": -1}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "reject with a reason over 500 characters", action: "reject", body: `{"wave": 1, "reason": "` + strings.Repeat("x", 501) + `"}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "resume with a wave", action: "resume", body: `{"wave": 1}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "resume with a wave by name", action: "resume", body: `{"wave": "rest"}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "resume with an unknown field", action: "resume", body: `{"freezeOverride": true, "force": true}`, contentType: "", status: 400, code: CodeRequestInvalid},
		{name: "freezeOverride as a string", action: "resume", body: `{"freezeOverride": "yes"}`, contentType: "", status: 400, code: CodeRequestInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			before, audits := h.store.snapshot(), h.store.auditLen()
			r := post("/api/v1/rollouts/"+id+"/actions/"+c.action, RoleOperator, c.body)
			r.contentType = c.contentType
			wantProblem(t, h.do(r), c.status, c.code)
			if h.store.snapshot() != before || h.store.auditLen() != audits {
				t.Errorf("bad input changed the store or the audit log")
			}
		})
	}
}

// Approvals of one wave, concurrent or repeated while the wave still shows
// waiting_approval (the rollout is paused, so the engine does not start
// it): the first is the one success, every other is refused with 409 and
// audited as a failure.
func TestApprove_ConcurrentApprovals_OneSuccess(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")))
	const n = 20
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		// Two distinct approvers, so that a second approval is refused
		// because the wave is approved, not because its approver repeats.
		r := post("/api/v1/rollouts/"+id+"/actions/approve", RoleOperator, `{"wave": 1}`)
		if i%2 == 1 {
			r = as(r, samToken)
		}
		go func() {
			defer wg.Done()
			codes <- h.do(r).status
		}()
	}
	wg.Wait()
	close(codes)
	ok, refused := 0, 0
	for c := range codes {
		switch c {
		case 200:
			ok++
		case 409:
			refused++
		default:
			t.Errorf("approve answered %d", c)
		}
	}
	if ok != 1 || refused != n-1 {
		t.Fatalf("%d successes and %d refusals, want 1 and %d", ok, refused, n-1)
	}
	successes := 0
	for _, e := range h.store.auditEntries() {
		if e.Action == "rollout.approve" && e.Result == audit.ResultSuccess {
			successes++
		}
	}
	if successes != 1 {
		t.Fatalf("%d audited approval successes, want 1", successes)
	}
}

// A wave is named by its index or by its name: {"wave": "rest"} and
// {"wave": "1"} are {"wave": 1}.
func TestApproveAndReject_TakeTheWavesName(t *testing.T) {
	for _, body := range []string{`{"wave": "rest"}`, `{"wave": "1"}`, `{"wave": 1}`} {
		t.Run("approve "+body, func(t *testing.T) {
			h := newHarness(t)
			id := h.waitingApproval()
			v := decode[rolloutView](t, h.do(post("/api/v1/rollouts/"+id+"/actions/approve", RoleOperator, body)))
			if v.Status != rollout.Running || !v.Waves[1].Approved {
				t.Errorf("after approve: %s, wave 1 approved %v; want running, true", v.Status, v.Waves[1].Approved)
			}
			if e := h.store.lastAudit(); e.Action != "rollout.approve" || e.Result != audit.ResultSuccess || e.Details["wave"] != float64(1) {
				t.Errorf("audit %+v, want a successful approve of wave 1", e)
			}
		})
	}
	h := newHarness(t)
	id := h.waitingApproval()
	v := decode[rolloutView](t, h.do(post("/api/v1/rollouts/"+id+"/actions/reject", RoleOperator, `{"wave": "rest", "reason": "not today"}`)))
	if v.Status != rollout.Paused || v.Waves[1].Rejected == nil || v.StatusReason != `wave 1 "rest" rejected by Dana Operator: not today` {
		t.Errorf("after reject: %s (%s); want paused with the rejection", v.Status, v.StatusReason)
	}
}

// TestActions_WaveNameOfAMissingRolloutIs404: the name is resolved against
// the rollout, so a rollout that does not exist is a 404 first.
func TestActions_WaveNameOfAMissingRolloutIs404(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(post("/api/v1/rollouts/r-404/actions/approve", RoleOperator, `{"wave": "rest"}`)), http.StatusNotFound, CodeRolloutNotFound)
	if n := h.store.auditLen(); n != 0 {
		t.Errorf("%d audit entries for a rollout that does not exist", n)
	}
}

// failConfig makes an agent report that it could not apply its desired
// configuration.
func (h *harness) failConfig(id string) {
	h.store.Lock()
	defer h.store.Unlock()
	a := h.store.Agents[id]
	a.RemoteConfig = agent.RemoteConfigStatus{Hash: a.DesiredHash, Status: agent.ConfigFailed, Since: h.now, Error: "bad exporter"}
	h.store.Agents[id] = a
}

// retry-failed runs the failed targets again; with nothing failed it is a
// 409 nothing_to_retry that changes nothing: a paused rollout stays
// paused, rather than being resumed under another name.
func TestRetryFailed_RunsTheFailedAgain_NothingFailedIs409(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	h.pass(id) // the canary e1 starts
	h.failConfig("e1")
	h.pass(id) // e1 fails: the threshold (1) pauses the rollout
	if r := h.rollout(id); r.Status != rollout.Paused {
		t.Fatalf("rollout is %s (%s), want paused by the failure", r.Status, r.StatusReason)
	}
	h.advance(time.Minute)
	v := decode[rolloutView](t, h.do(post("/api/v1/rollouts/"+id+"/actions/retry-failed", RoleOperator, "")))
	if v.Status != rollout.Running || v.TargetCounts == nil || v.TargetCounts.InProgress != 1 || v.TargetCounts.Failed != 0 {
		t.Fatalf("after retry-failed: %s %+v; want running with e1 in progress again", v.Status, v.TargetCounts)
	}
	if e := h.store.lastAudit(); e.Action != "rollout.retry-failed" || e.Result != audit.ResultSuccess {
		t.Errorf("audit %+v, want a successful retry-failed", e)
	}

	// e1 applies this time; nothing failed now: pause, then retry-failed is
	// refused.
	h.advance(time.Minute)
	h.applyConfig("e1")
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")))
	before, audits := h.store.snapshot(), h.store.auditLen()
	p := wantProblem(t, h.do(post("/api/v1/rollouts/"+id+"/actions/retry-failed", RoleOperator, "")), http.StatusConflict, CodeNothingToRetry)
	if want := "rollout " + id + " has no failed targets, waves or stages to retry; it is paused; resume continues it"; p.Detail != want {
		t.Errorf("detail %q, want %q", p.Detail, want)
	}
	if h.store.snapshot() != before || h.rollout(id).Status != rollout.Paused {
		t.Errorf("a refused retry-failed changed the rollout (now %s)", h.rollout(id).Status)
	}
	if e := h.store.lastAudit(); h.store.auditLen() != audits+1 || e.Action != "rollout.retry-failed" || e.Result != audit.ResultFailure || e.Details["code"] != CodeNothingToRetry {
		t.Errorf("audit %+v, want a failed retry-failed with code nothing_to_retry", e)
	}
}
