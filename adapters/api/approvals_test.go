package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/rollout"
)

// policyWith is the fixture's policy canary-then-all (canary, then rest
// after an approval, health wait 5m) with more of its spec.
func policyWith(more string) string {
	return canaryPolicy + more
}

// filesWithPolicy is the fixture revision with the policy of the edge
// fleet replaced.
func filesWithPolicy(policy string) map[string]string {
	files := fixtureFiles()
	files["policies/canary-then-all.yaml"] = policy
	return files
}

func actionPath(id, action string) string { return "/api/v1/rollouts/" + id + "/actions/" + action }

// as sends r with another principal's token.
func as(r req, token string) req {
	r.token = token
	return r
}

func TestReject_StopsTheWavePausesWithTheReasonAndAudits(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	h.park(id, "tok-1")
	rep := h.do(post(actionPath(id, "reject"), RoleOperator, `{"wave": 1, "reason": "error budget of the week is spent"}`))
	wantOK(t, rep)
	v := decode[rolloutView](t, rep)
	w := v.Waves[1]
	if v.Status != rollout.Paused || v.StatusReason != `wave 1 "rest" rejected by Dana Operator: error budget of the week is spent` {
		t.Errorf("after reject: %s %q, want paused with the rejection", v.Status, v.StatusReason)
	}
	if w.Status != rollout.WaveFailed || w.Approved || w.Counts.Pending != 3 || w.Counts.InProgress != 0 {
		t.Errorf("wave 1 %s approved %v counts %+v: failed, nothing of it started", w.Status, w.Approved, w.Counts)
	}
	if d := w.Rejected; d == nil || d.By != "Dana Operator" || d.ByActor != operator.Actor || d.Reason != "error budget of the week is spent" || !d.At.Equal(h.clock()) {
		t.Errorf("rejected %+v, want Dana Operator's decision with the reason", d)
	}
	if w.ApprovalExpiresAt != nil {
		t.Errorf("a rejected wave shows an expiry %v", w.ApprovalExpiresAt)
	}
	if got := h.sfn.wokenTokens(); len(got) != 1 || got[0] != "tok-1" {
		t.Errorf("woken %v, want [tok-1]", got)
	}
	e := h.store.lastAudit()
	if e.Action != "rollout.reject" || e.Actor != operator.Actor || e.Result != audit.ResultSuccess || e.Details["wave"] != float64(1) ||
		e.Details["reason"] != "error budget of the week is spent" || e.Details["status"] != "paused" {
		t.Errorf("audit %+v", e)
	}

	// rejected once: the wave no longer waits; resume asks for its approval again
	wantProblem(t, h.do(post(actionPath(id, "reject"), RoleOperator, `{"wave": 1}`)), http.StatusConflict, CodeWaveNotApprovable)
	h.advance(time.Minute)
	v = decode[rolloutView](t, h.do(post(actionPath(id, "resume"), RoleOperator, "")))
	w = v.Waves[1]
	if v.Status != rollout.WaitingApproval || w.Status != rollout.WaveWaitingApproval || w.Rejected != nil || len(w.Approvals) != 0 {
		t.Fatalf("after resume: %s, wave 1 %s rejected %+v: want it waiting for approval anew", v.Status, w.Status, w.Rejected)
	}
	if w.WaitingSince == nil || !w.WaitingSince.Equal(h.clock()) || w.ApprovalExpiresAt == nil || !w.ApprovalExpiresAt.Equal(h.clock().Add(72*time.Hour)) {
		t.Errorf("waiting since %v expires %v, want now and now + 72h (the default expiry)", w.WaitingSince, w.ApprovalExpiresAt)
	}
	wantOK(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`)))
}

// The rollout's creator cannot approve it: a GitOps rollout counts the
// actor who applied its revision (admin applies the fixture) as its
// creator; another operator can.
func TestApprove_ApplierOfTheRevisionIsRefusedSelfApproval(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	before, audits := h.store.snapshot(), h.store.auditLen()
	p := wantProblem(t, h.do(post(actionPath(id, "approve"), RoleAdmin, `{"wave": 1}`)), http.StatusConflict, CodeSelfApproval)
	if !strings.Contains(p.Detail, `CI pipeline applied the revision that created this rollout and cannot approve it; another operator must approve wave 1 "rest"`) {
		t.Errorf("detail %q", p.Detail)
	}
	if h.store.snapshot() != before || h.store.auditLen() != audits+1 {
		t.Fatalf("a refused approval changed the store, or was not audited once")
	}
	if e := h.store.lastAudit(); e.Action != "rollout.approve" || e.Actor != admin.Actor || e.Result != audit.ResultFailure || e.Details["code"] != CodeSelfApproval {
		t.Errorf("audit %+v, want the failed approval with code self_approval", e)
	}
	// the rollout names the applier the rule counts, beside createdBy gitops
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	if v.CreatedBy != "gitops" || len(v.AppliedBy) != 1 || v.AppliedBy[0].ByActor != admin.Actor || v.AppliedBy[0].By != admin.DisplayName || v.AppliedBy[0].At.IsZero() {
		t.Errorf("createdBy %q appliedBy %+v, want gitops and the admin who applied the revision", v.CreatedBy, v.AppliedBy)
	}
	// rejecting is not approving: the applier may stop the wave
	if v := decode[rolloutView](t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`))); v.Status != rollout.Running || !v.Waves[1].Approved {
		t.Errorf("another operator's approval: %s, approved %v", v.Status, v.Waves[1].Approved)
	}
}

// A rollout created from the UI (select-version) names its creator in
// createdBy: that operator cannot approve it.
func TestApprove_CreatorOfAUIRolloutIsRefusedSelfApproval(t *testing.T) {
	h := newHarness(t)
	files := fixtureFiles()
	files["fleets/edge.yaml"] = strings.Replace(edgeFleet, "rollout: {configPolicy: canary-then-all}",
		"rollout: {configPolicy: canary-then-all, versionPolicy: canary-then-all}", 1)
	h.applyFiles(files)
	sel := decode[selectResponse](t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`)))
	id := sel.RolloutID
	h.pass(id) // starts the canary e1
	h.store.Lock()
	e1 := h.store.Agents["e1"]
	e1.ServiceVersion = "0.162.0"
	h.store.Agents["e1"] = e1
	h.store.Unlock()
	h.pass(id) // e1 verifying
	h.advance(5 * time.Minute)
	h.pass(id)
	if r := h.rollout(id); r.Status != rollout.WaitingApproval || r.Origin != rollout.OriginUI || r.CreatedBy != operator.Actor {
		t.Fatalf("version rollout %s origin %s createdBy %q, want waiting_approval, ui, the operator", r.Status, r.Origin, r.CreatedBy)
	}
	wantProblem(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`)), http.StatusConflict, CodeSelfApproval)
	if v := decode[rolloutView](t, h.do(as(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`), samToken))); !v.Waves[1].Approved ||
		v.Waves[1].Approvals[0].By != "Sam Reviewer" {
		t.Errorf("Sam's approval: %+v", v.Waves[1])
	}
}

// approvals.required 2: the first approval is recorded and the wave keeps
// waiting; the same actor cannot count twice, the applier not at all; the
// second distinct approver releases it.
func TestApprove_TwoDistinctApproversReleaseTheWave(t *testing.T) {
	h := newHarness(t)
	id := h.applyFiles(filesWithPolicy(policyWith("  approvals: {required: 2}\n")))
	h.throughCanary(id)
	approveAt := h.clock()
	v := decode[rolloutView](t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1, "reason": "canary green"}`)))
	w := v.Waves[1]
	if v.Status != rollout.WaitingApproval || v.StatusReason != `wave 1 "rest" waits for approval (1 of 2)` || w.Approved || w.Counts.Pending != 3 {
		t.Errorf("after one approval: %s %q approved %v pending %d; want it still waiting, nothing started", v.Status, v.StatusReason, w.Approved, w.Counts.Pending)
	}
	if w.ApprovalsRequired != 2 || len(w.Approvals) != 1 || w.Approvals[0].By != "Dana Operator" || w.Approvals[0].ByActor != operator.Actor ||
		w.Approvals[0].Reason != "canary green" || !w.Approvals[0].At.Equal(approveAt) || v.Policy.Approvals.Required != 2 {
		t.Errorf("approvals %d/%d %+v, policy %+v", len(w.Approvals), w.ApprovalsRequired, w.Approvals, v.Policy.Approvals)
	}
	p := wantProblem(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`)), http.StatusConflict, CodeWaveApproved)
	if !strings.Contains(p.Detail, "already approved by Dana Operator; it needs 2 distinct approvers") {
		t.Errorf("detail %q", p.Detail)
	}
	wantProblem(t, h.do(post(actionPath(id, "approve"), RoleAdmin, `{"wave": 1}`)), http.StatusConflict, CodeSelfApproval)
	v = decode[rolloutView](t, h.do(as(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`), samToken)))
	w = v.Waves[1]
	if v.Status != rollout.Running || !w.Approved || len(w.Approvals) != 2 || w.Approvals[1].By != "Sam Reviewer" || w.Counts.InProgress != 3 {
		t.Errorf("after the second approval: %s approved %v approvals %+v in progress %d", v.Status, w.Approved, w.Approvals, w.Counts.InProgress)
	}
	var codes []string
	for _, e := range h.store.auditEntries() {
		if e.Action == "rollout.approve" {
			codes = append(codes, e.Result+":"+str(e.Details["code"]))
		}
	}
	if join(codes) != "success:,failure:wave_already_approved,failure:self_approval,success:" {
		t.Errorf("audited approvals %v", codes)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// approvals.expiry 1h: the view says when the approval expires; an
// approval after it is refused, the expiry stops the wave (onFailure
// pause), and resume asks for the approval again.
func TestApprove_AfterTheExpiryIsRefusedAndTheExpiryStopsTheWave(t *testing.T) {
	h := newHarness(t)
	id := h.applyFiles(filesWithPolicy(policyWith("  approvals: {expiry: 1h}\n")))
	h.throughCanary(id)
	since := h.clock()
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	if w := v.Waves[1]; w.WaitingSince == nil || !w.WaitingSince.Equal(since) || w.ApprovalExpiresAt == nil ||
		!w.ApprovalExpiresAt.Equal(since.Add(time.Hour)) || w.ApprovalsRequired != 1 || v.Policy.Approvals.Expiry != time.Hour {
		t.Fatalf("wave 1 waiting since %v, expires %v, needs %d; policy %+v", w.WaitingSince, w.ApprovalExpiresAt, w.ApprovalsRequired, v.Policy.Approvals)
	}
	h.advance(time.Hour)
	before := h.store.snapshot()
	p := wantProblem(t, h.do(post(actionPath(id, "approve"), RoleOperator, `{"wave": 1}`)), http.StatusConflict, CodeApprovalExpired)
	if !strings.Contains(p.Detail, `the approval of wave 1 "rest" expired at `+since.Add(time.Hour).Format(time.RFC3339)) {
		t.Errorf("detail %q", p.Detail)
	}
	if h.store.snapshot() != before {
		t.Errorf("a refused approval changed the store")
	}
	if e := h.store.lastAudit(); e.Result != audit.ResultFailure || e.Details["code"] != CodeApprovalExpired {
		t.Errorf("audit %+v", e)
	}
	wantProblem(t, h.do(post(actionPath(id, "reject"), RoleOperator, `{"wave": 1}`)), http.StatusConflict, CodeApprovalExpired)

	h.pass(id) // the engine sees the expiry
	v = decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	w := v.Waves[1]
	if v.Status != rollout.Paused || !strings.Contains(v.StatusReason, `the approval of wave 1 "rest" expired after 1h0m0s (0 of 1 approvals)`) {
		t.Errorf("after the expiry: %s %q", v.Status, v.StatusReason)
	}
	if d := w.Rejected; w.Status != rollout.WaveFailed || d == nil || d.By != "system" || d.ByActor != "" || d.Reason != "expired" {
		t.Errorf("wave 1 %s rejected %+v, want failed by the system's expiry", w.Status, d)
	}
	v = decode[rolloutView](t, h.do(post(actionPath(id, "resume"), RoleOperator, "")))
	if w := v.Waves[1]; w.Status != rollout.WaveWaitingApproval || w.Rejected != nil || !w.ApprovalExpiresAt.Equal(h.clock().Add(time.Hour)) {
		t.Errorf("after resume: wave 1 %s rejected %+v expires %v, want a new wait of 1h", w.Status, w.Rejected, w.ApprovalExpiresAt)
	}
}

// A freeze without regions holds every stage: the canary does not start,
// its stage and the rollout show frozen with the freeze; resume with
// freezeOverride records the override, the stage starts at once, and
// the audit entry says so.
func TestResume_FreezeOverrideStartsAFrozenStageAndIsAudited(t *testing.T) {
	h := newHarness(t)
	freeze := "  freezes:\n    - {name: holidays, from: \"2026-11-30T08:00:00Z\", until: \"2026-12-02T00:00:00Z\"}\n"
	id := h.applyFiles(filesWithPolicy(policyWith(freeze)))
	h.pass(id)
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	const held = `freeze "holidays" (every region) until 2026-12-02T00:00:00Z`
	if len(v.Stages) == 0 || v.Stages[0].Status != rollout.StageFrozen || v.Stages[0].Held != held {
		t.Fatalf("stages %+v, want the canary frozen: %s", v.Stages, held)
	}
	if v.Status != rollout.Frozen || v.StatusReason != "stage canary held by "+held || v.Waves[0].Counts.InProgress != 0 {
		t.Errorf("rollout %s %q, in progress %d: frozen, held, nothing started", v.Status, v.StatusReason, v.Waves[0].Counts.InProgress)
	}
	if len(v.Policy.Freezes) != 1 || v.Policy.Freezes[0].Name != "holidays" || v.Policy.Topology == nil {
		t.Errorf("policy freezes %+v topology %v", v.Policy.Freezes, v.Policy.Topology)
	}
	// a plain resume is for a paused rollout
	wantProblem(t, h.do(post(actionPath(id, "resume"), RoleOperator, "")), http.StatusConflict, CodeActionNotAllowed)

	rep := h.do(post(actionPath(id, "resume"), RoleOperator, `{"freezeOverride": true, "reason": "hotfix for INC-4711"}`))
	wantOK(t, rep)
	v = decode[rolloutView](t, rep)
	if o := v.FreezeOverride; o == nil || o.By != "Dana Operator" || o.ByActor != operator.Actor || o.Reason != "hotfix for INC-4711" || !o.At.Equal(h.clock()) {
		t.Errorf("freezeOverride %+v", o)
	}
	if st := v.Stages[0]; st.Status != rollout.StageRunning || st.Held != "" || v.Waves[0].Counts.InProgress != 1 || v.StatusReason != "" {
		t.Errorf("after the override: stage %s held %q, in progress %d, reason %q; want the canary started", st.Status, st.Held, v.Waves[0].Counts.InProgress, v.StatusReason)
	}
	e := h.store.lastAudit()
	if e.Action != "rollout.resume" || e.Result != audit.ResultSuccess || e.Details["freezeOverride"] != true || e.Details["reason"] != "hotfix for INC-4711" {
		t.Errorf("audit %+v, want a successful rollout.resume with freezeOverride and the reason", e)
	}
}
