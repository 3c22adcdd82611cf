package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/rollout"
)

// TestApplyRevision_ConflictIsAuditedAsAFailure: a revision that loses the
// race with another is refused with 409 conflict, and like every refusal of
// revision.apply it leaves a failed entry.
func TestApplyRevision_ConflictIsAuditedAsAFailure(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	h.store.Fail("PutRevision", fmt.Errorf("put revision: %w", rollout.ErrConflict))
	audits := h.store.auditLen()
	wantProblem(t, h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "c0ffee", fixtureFiles()))), http.StatusConflict, CodeConflict)
	e := h.store.lastAudit()
	if h.store.auditLen() != audits+1 || e.Action != ActionRevisionApply || e.Result != audit.ResultFailure ||
		e.TargetID != "c0ffee" || e.Actor != admin.Actor || e.Details["code"] != CodeConflict || e.Details["error"] == "" {
		t.Errorf("audit %d entries, last %+v; want one failed revision.apply of c0ffee with the code", h.store.auditLen()-audits, e)
	}
}

// apiRoutes are the operations the router serves under /api/v1, with the
// path parameters filled from the fixture (a rollout, fleet edge, a
// configured release); the OpenAPI document, a file served as it is, is
// left out.
func apiRoutes(t *testing.T, h *harness, rolloutID string) []req {
	t.Helper()
	fill := strings.NewReplacer("{id}", rolloutID, "{name}", "edge", "{action}", "pause",
		"{distribution}", "otelcol-contrib", "{version}", "0.161.0")
	var out []req
	err := chi.Walk(h.srv.Config.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, "/api/v1/") && route != "/api/v1/openapi.yaml" {
			out = append(out, req{method: method, path: fill.Replace(route), token: tokens[RoleAdmin]})
		}
		return nil
	})
	if err != nil || len(out) < 25 {
		t.Fatalf("walked %d routes: %v", len(out), err)
	}
	return out
}

// TestQuery_UndecodableIs400OnEveryRoute: a query string with a broken
// escape is refused like an unknown parameter, instead of its pair being
// dropped and the filter ignored.
func TestQuery_UndecodableIs400OnEveryRoute(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	p := wantProblem(t, h.do(get("/api/v1/rollouts?status=completed%ZZ", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	if !strings.Contains(p.Detail, "query string") || !strings.Contains(p.Detail, "%ZZ") {
		t.Errorf("detail %q, want it to name the broken escape", p.Detail)
	}
	for _, r := range apiRoutes(t, h, id) {
		before, audits := h.store.snapshot(), h.store.auditLen()
		r.path += "?limit=1%ZZ"
		p := wantProblem(t, h.do(r), http.StatusBadRequest, CodeRequestInvalid)
		if !strings.Contains(p.Detail, "query string") {
			t.Errorf("%s %s: detail %q, want the query named", r.method, r.path, p.Detail)
		}
		if h.store.snapshot() != before || h.store.auditLen() != audits {
			t.Errorf("%s %s changed the store or wrote an audit entry", r.method, r.path)
		}
	}
}

// TestMethods_405CarriesAllow: a path that exists answered with another
// method lists the path's methods (RFC 9110, 15.5.6), HEAD with GET.
func TestMethods_405CarriesAllow(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ method, path, allow string }{
		{method: http.MethodDelete, path: "/api/v1/rollouts", allow: "GET, HEAD"},
		{method: http.MethodPost, path: "/api/v1/fleets/edge", allow: "GET, HEAD"},
		{method: http.MethodGet, path: "/api/v1/revisions", allow: "POST"},
		{method: http.MethodHead, path: "/api/v1/rollouts/r-1/actions/pause", allow: "POST"},
		{method: http.MethodPatch, path: "/api/v1/releases/otelcol-contrib/0.161.0", allow: "GET, HEAD, PUT, DELETE"},
	} {
		rep := h.do(req{method: c.method, path: c.path, token: tokens[RoleAdmin]})
		if c.method != http.MethodHead {
			wantProblem(t, rep, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
		} else if rep.status != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: status %d, want 405", c.path, rep.status)
		}
		if got := rep.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}

// TestMethods_HeadWhereverGet: HEAD answers as GET does, with the same
// status and headers and no body.
func TestMethods_HeadWhereverGet(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	for _, r := range apiRoutes(t, h, id) {
		if r.method != http.MethodGet {
			continue
		}
		got := h.do(req{method: http.MethodHead, path: r.path, token: r.token})
		want := h.do(r)
		if got.status != want.status || len(got.body) != 0 {
			t.Errorf("HEAD %s: status %d with %d bytes, want %d without a body", r.path, got.status, len(got.body), want.status)
		}
		for _, k := range []string{"Content-Type", "Cache-Control", "Content-Length"} {
			if got.header.Get(k) != want.header.Get(k) {
				t.Errorf("HEAD %s: %s %q, GET has %q", r.path, k, got.header.Get(k), want.header.Get(k))
			}
		}
	}
	if rep := h.do(req{method: http.MethodHead, path: "/api/v1/rollouts"}); rep.status != http.StatusUnauthorized {
		t.Errorf("HEAD without a token: %d, want 401 as for GET", rep.status)
	}
}

// TestBody_WhitespaceIsNotNoBody: "no options" is no body or {}. A body of
// only whitespace is neither, so it is a 400 wherever a body is optional
// (pause, clear-version-selection, putRelease), as it is where one is
// required, with and without a content type; nothing is carried out.
func TestBody_WhitespaceIsNotNoBody(t *testing.T) {
	for _, body := range []string{" ", "\n", "\t\r\n "} {
		for _, ct := range []string{"", "-"} {
			h := newHarness(t)
			id := h.waitingApproval()
			for _, r := range []req{
				post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, body),
				post("/api/v1/rollouts/"+id+"/actions/abort", RoleOperator, body),
				post("/api/v1/fleets/edge/actions/clear-version-selection", RoleOperator, body),
				{method: http.MethodPut, path: "/api/v1/releases/otelcol-contrib/0.163.0", token: tokens[RoleAdmin], body: body},
				post("/api/v1/fleets/edge/actions/select-version", RoleOperator, body),
			} {
				r.contentType = ct
				before, audits := h.store.snapshot(), h.store.auditLen()
				wantProblem(t, h.do(r), http.StatusBadRequest, CodeRequestInvalid)
				if h.store.snapshot() != before || h.store.auditLen() != audits {
					t.Errorf("%s %q (content type %q) changed the store", r.path, body, ct)
				}
			}
			if st := h.rollout(id).Status; st != rollout.WaitingApproval {
				t.Errorf("the rollout is %s after whitespace bodies, want it still waiting_approval", st)
			}
			wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, ""))) // no body still means no options
		}
	}
}
