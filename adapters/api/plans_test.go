package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/predict"
)

func planBody(t *testing.T, req schema.PlanRequest) string {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// changedFiles is the fixture revision with a new edge configuration.
func changedFiles() map[string]string {
	files := fixtureFiles()
	files["configs/edge.yaml"] = "receivers: {otlp: {}, hostmetrics: {}}\n"
	return files
}

func whenJSON(w *predict.When) string {
	if w == nil {
		return "-"
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// A proposed revision that changes the edge configuration while the
// fixture's rollout runs: the new rollout would supersede it, the canary
// runs first, then the rest after an approval, every moment after it an
// offset from it.
func TestCreatePlan_ProposedRevision(t *testing.T) {
	h := newHarness(t)
	active := h.applyFixture()
	rep := h.do(post("/api/v1/plans", RoleViewer, planBody(t, schema.PlanRequest{Fleet: "edge", Kind: "config",
		Revision: &schema.RevisionRequest{Commit: "c2", Files: changedFiles()}})))
	wantOK(t, rep)
	p := decode[schema.Plan](t, rep)
	if !p.Planned || p.Commit != "c2" || p.Supersedes != active || p.Relevant != 4 || p.Targets != 4 || len(p.Waves) != 2 {
		t.Fatalf("plan %s", rep.body)
	}
	if want := "Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@c2"; p.Policy.Name != "canary-then-all" || p.Policy.Source != want {
		t.Errorf("policy %+v, want the source line %q", p.Policy, want)
	}
	pr := p.Prediction
	canaryEnd := predict.At(t0.Add(predict.DefaultApplyConfig + 5*time.Minute))
	if len(pr.Approvals) != 1 || pr.Approvals[0].Wave != 1 || whenJSON(&pr.Approvals[0].RequestedAt) != whenJSON(&canaryEnd) {
		t.Errorf("approvals %+v, want wave 1 asked at %s", pr.Approvals, whenJSON(&canaryEnd))
	}
	finish := predict.AfterApproval(1, predict.DefaultApplyConfig+5*time.Minute)
	if !pr.Complete || whenJSON(pr.Finish) != whenJSON(&finish) || pr.ApplySeconds.Source != predict.SourceDefault || pr.ApplySeconds.Median != 20 {
		t.Errorf("prediction %+v, want the finish %s with the default apply time", pr, whenJSON(&finish))
	}
	if w := p.Waves[1]; w.Size != 3 || !w.RequiresApproval || whenJSON(w.Start) != `{"afterApprovalOf":1,"offsetSeconds":0}` {
		t.Errorf("wave 1 %+v", w)
	}
}

// Without a revision the applied one is planned: the fixture's rollout
// heads for its target already, so nothing new is planned.
func TestCreatePlan_ActiveRolloutHeadsForTheTarget(t *testing.T) {
	h := newHarness(t)
	active := h.applyFixture()
	p := decode[schema.Plan](t, h.do(post("/api/v1/plans", RoleViewer, `{"fleet": "edge", "kind": "config"}`)))
	if p.Planned || p.ActiveRolloutID != active || p.Prediction != nil || !strings.Contains(p.Note, active) {
		t.Fatalf("plan %+v, want nothing planned and the active rollout named", p)
	}
}

// A proposed version within the frame is planned as select-version would
// choose it; one outside the frame is not, and the note says why.
func TestCreatePlan_ProposedVersion(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	p := decode[schema.Plan](t, h.do(post("/api/v1/plans", RoleViewer, `{"fleet": "edge", "kind": "version", "version": "v0.162.0"}`)))
	if !p.Planned || p.ToRef != "0.162.0" || p.Targets != 4 || p.Prediction == nil || p.Prediction.ApplySeconds.Median != 120 {
		t.Fatalf("plan %+v, want a version rollout to 0.162.0 with the default 2m", p)
	}
	p = decode[schema.Plan](t, h.do(post("/api/v1/plans", RoleViewer, `{"fleet": "edge", "kind": "version", "version": "0.170.0"}`)))
	if p.Planned || p.Prediction != nil || !strings.Contains(p.Note, "outside update.selection") {
		t.Fatalf("plan %+v, want not planned: 0.170.0 is outside the frame", p)
	}
}

func TestCreatePlan_Refusals(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	broken := fixtureFiles()
	broken["policies/canary-then-all.yaml"] = strings.Replace(canaryPolicy, "healthWait: 5m", "healthWait: 5 minutes", 1)
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{name: "no fleet", body: `{"kind": "config"}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "no kind", body: `{"fleet": "edge"}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "unknown field", body: `{"fleet": "edge", "kind": "config", "wave": 1}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "version of a config plan", body: `{"fleet": "edge", "kind": "config", "version": "0.162.0"}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "not a version", body: `{"fleet": "edge", "kind": "version", "version": "latest"}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "revision without commit", body: `{"fleet": "edge", "kind": "config", "revision": {"files": {}}}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "unknown fleet", body: `{"fleet": "nowhere", "kind": "config"}`, status: http.StatusNotFound, code: CodeFleetNotFound},
		{name: "impossible fleet name", body: `{"fleet": "Not A Name", "kind": "config"}`, status: http.StatusNotFound, code: CodeFleetNotFound},
		{name: "fleet not in the revision", body: planBody(t, schema.PlanRequest{Fleet: "gone", Kind: "config",
			Revision: &schema.RevisionRequest{Commit: "c2", Files: fixtureFiles()}}), status: http.StatusNotFound, code: CodeFleetNotFound},
		{name: "invalid revision", body: planBody(t, schema.PlanRequest{Fleet: "edge", Kind: "config",
			Revision: &schema.RevisionRequest{Commit: "c2", Files: broken}}), status: http.StatusUnprocessableEntity, code: CodeRevisionInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := wantProblem(t, h.do(post("/api/v1/plans", RoleViewer, c.body)), c.status, c.code)
			if c.code == CodeRevisionInvalid && len(p.Issues) == 0 {
				t.Errorf("a revision_invalid without issues: %+v", p)
			}
		})
	}
	wantProblem(t, h.do(post("/api/v1/plans", "", `{"fleet": "edge", "kind": "config"}`)), http.StatusUnauthorized, CodeUnauthenticated)
}

// A running rollout carries its prediction, from its live state; a
// completed one does not.
func TestGetRollout_Prediction(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	h.pass(id) // starts the canary e1
	h.advance(10 * time.Second)
	h.applyConfig("e1") // e1 reports the new configuration
	h.pass(id)          // e1 enters verifying
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer)))
	pr := v.Prediction
	if pr == nil || len(pr.Approvals) != 1 || len(pr.Waves) != 2 || !pr.Complete {
		t.Fatalf("prediction %+v, want the approval of wave 1 and the course of both waves", pr)
	}
	asked := predict.At(t0.Add(10*time.Second + 5*time.Minute)) // e1's health wait ends
	if whenJSON(&pr.Approvals[0].RequestedAt) != whenJSON(&asked) || whenJSON(pr.Start) != whenJSON(ptrWhen(predict.At(t0))) {
		t.Errorf("approval asked %s, start %s; want %s and the canary's start", whenJSON(&pr.Approvals[0].RequestedAt), whenJSON(pr.Start), whenJSON(&asked))
	}
	if whenJSON(pr.Finish) != whenJSON(ptrWhen(predict.AfterApproval(1, predict.DefaultApplyConfig+5*time.Minute))) {
		t.Errorf("finish %s", whenJSON(pr.Finish))
	}
	h.store.Lock()
	r := h.store.Rollouts[id]
	r.Status = "completed"
	h.store.Rollouts[id] = r
	h.store.Unlock()
	if v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/"+id, RoleViewer))); v.Prediction != nil {
		t.Errorf("a completed rollout has a prediction: %+v", v.Prediction)
	}
}

func ptrWhen(w predict.When) *predict.When { return &w }
