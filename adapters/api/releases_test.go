package api

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/selection"
)

// The harness configures 0.160.0, 0.161.0, 0.162.0, 0.163.0-rc.1 and
// 0.170.0 on linux/amd64 and linux/arm64 (MYRIARCH_RELEASES), for every
// distribution. The fixture's fleets edge and core are otelcol-contrib on
// Git target 0.161.0; edge lets operators choose within
// ">=0.161.0, <=0.162.0" (executor manual), core has no frame.

func put(path string, role Role, body string) req {
	return req{method: http.MethodPut, path: path, token: tokens[role], body: body}
}

func del(path string, role Role) req {
	return req{method: http.MethodDelete, path: path, token: tokens[role]}
}

func summaries(rs []schema.Release) []string {
	var out []string
	for _, r := range rs {
		s := r.Version + " " + string(r.Source)
		if r.Latest {
			s += " latest"
		}
		out = append(out, s)
	}
	return out
}

func TestListReleases_ConfiguredReleasesNewestFirstInPages(t *testing.T) {
	h := newHarness(t)
	all := decode[page.Page[schema.Release]](t, h.do(get("/api/v1/releases?distribution=otelcol-contrib", RoleViewer)))
	want := []string{"0.170.0 config latest", "0.163.0-rc.1 config", "0.162.0 config", "0.161.0 config", "0.160.0 config"}
	if got := summaries(all.Items); !reflect.DeepEqual(got, want) || all.Next != "" {
		t.Fatalf("catalogue %v (next %q), want %v", got, all.Next, want)
	}
	if r := all.Items[1]; !r.Prerelease || !reflect.DeepEqual(r.Platforms, []string{"linux/amd64", "linux/arm64"}) || r.UpdatedAt != nil {
		t.Errorf("configured release candidate %+v", r)
	}
	var paged []schema.Release
	token := ""
	for pages := 0; pages < 5; pages++ {
		p := decode[page.Page[schema.Release]](t, h.do(get("/api/v1/releases?distribution=otelcol-contrib&limit=2&pageToken="+token, RoleViewer)))
		paged = append(paged, p.Items...)
		if token = p.Next; token == "" {
			break
		}
	}
	if got := summaries(paged); !reflect.DeepEqual(got, want) {
		t.Errorf("pages of 2: %v, want %v", got, want)
	}
}

func TestListReleases_Refusals(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(get("/api/v1/releases", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)                                     // which distribution?
	wantProblem(t, h.do(get("/api/v1/releases?distribution=otelcol&distro=x", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)       // a misspelled parameter
	wantProblem(t, h.do(get("/api/v1/releases?distribution=otelcol&pageToken=nope", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid) // not our token
	wantProblem(t, h.do(get("/api/v1/releases?distribution=otelcol&limit=0", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)        // no such page size
	p := decode[page.Page[schema.Release]](t, h.do(get("/api/v1/releases?distribution="+strings.Repeat("X", 3000), RoleViewer)))             // no release has that name
	if len(p.Items) != 0 {
		t.Errorf("an impossible distribution lists %v", p.Items)
	}
	wantProblem(t, h.do(req{method: http.MethodGet, path: "/api/v1/releases?distribution=otelcol"}), http.StatusUnauthorized, CodeUnauthenticated)
}

func TestPutRelease_CreateUpdateNoopAudited(t *testing.T) {
	h := newHarness(t)
	path := "/api/v1/releases/otelcol-contrib/0.171.0"
	rep := h.do(put(path, RoleAdmin, `{"publishedAt": "2026-11-30T12:00:00+01:00", "platforms": ["linux/arm64", "linux/amd64", "linux/arm64"]}`))
	if rep.status != http.StatusCreated {
		t.Fatalf("status %d, want 201: %s", rep.status, rep.body)
	}
	v := decode[schema.Release](t, rep)
	if v.Source != releases.SourceAdmin || !v.Latest || v.UpdatedBy != admin.DisplayName || v.UpdatedByActor != admin.Actor ||
		!reflect.DeepEqual(v.Platforms, []string{"linux/amd64", "linux/arm64"}) || v.PublishedAt == nil ||
		!v.PublishedAt.Equal(time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)) || v.UpdatedAt == nil || !v.UpdatedAt.Equal(t0) {
		t.Errorf("created %+v", v)
	}
	e := h.store.lastAudit()
	if e.Action != ActionReleasePut || e.TargetType != TargetRelease || e.TargetID != "otelcol-contrib/0.171.0" || e.Result != audit.ResultSuccess ||
		e.Actor != admin.Actor || e.Details["created"] != true || e.Details["noop"] != false || e.Details["publishedAt"] != "2026-11-30T11:00:00Z" {
		t.Errorf("audit %+v", e)
	}
	stored, _ := h.store.stored("otelcol-contrib/0.171.0")

	// The same again is a no-op: 200, nothing written, audited as such.
	h.advance(time.Minute)
	rep = h.do(put(path, RoleAdmin, `{"publishedAt": "2026-11-30T11:00:00Z", "platforms": ["linux/amd64", "linux/arm64"]}`))
	wantOK(t, rep)
	if again, _ := h.store.stored("otelcol-contrib/0.171.0"); again.Revision != stored.Revision || !again.UpdatedAt.Equal(*stored.UpdatedAt) {
		t.Errorf("a no-op wrote: %+v", again)
	}
	if e := h.store.lastAudit(); e.Details["noop"] != true || e.Details["created"] != false || e.Details["previousSource"] != "admin" {
		t.Errorf("no-op audit %+v", e.Details)
	}

	// Another body updates it; no body at all clears what it said.
	wantOK(t, h.do(put(path, RoleAdmin, `{"platforms": ["windows/amd64"]}`)))
	if r, _ := h.store.stored("otelcol-contrib/0.171.0"); r.Revision != stored.Revision+1 || !reflect.DeepEqual(r.Platforms, []string{"windows/amd64"}) || r.PublishedAt != nil {
		t.Errorf("updated %+v", r)
	}
	rep = h.do(req{method: http.MethodPut, path: path, token: tokens[RoleAdmin]})
	wantOK(t, rep)
	if v := decode[schema.Release](t, rep); len(v.Platforms) != 0 || v.PublishedAt != nil {
		t.Errorf("put without a body: %+v", v)
	}

	// An administrator's entry shadows a configured release of the same version.
	rep = h.do(put("/api/v1/releases/otelcol-contrib/0.162.0", RoleAdmin, `{"platforms": ["linux/s390x"]}`))
	if rep.status != http.StatusCreated {
		t.Fatalf("over a configured release: %d %s, want 201 (nothing was stored)", rep.status, rep.body)
	}
	list := decode[page.Page[schema.Release]](t, h.do(get("/api/v1/releases?distribution=otelcol-contrib", RoleViewer)))
	if got := summaries(list.Items); !reflect.DeepEqual(got, []string{"0.171.0 admin latest", "0.170.0 config", "0.163.0-rc.1 config",
		"0.162.0 admin", "0.161.0 config", "0.160.0 config"}) {
		t.Errorf("catalogue %v", got)
	}
	// Another distribution has its own entries, and the configured ones.
	other := decode[page.Page[schema.Release]](t, h.do(get("/api/v1/releases?distribution=otelcol", RoleViewer)))
	if len(other.Items) != 5 || other.Items[0].Source != releases.SourceConfig {
		t.Errorf("otelcol %v", summaries(other.Items))
	}
	// The history of the release.
	hist := decode[page.Page[auditView]](t, h.do(get("/api/v1/audit?targetType=release&targetId=otelcol-contrib/0.171.0", RoleViewer)))
	if len(hist.Items) != 4 || hist.Items[0].ActorDisplayName != admin.DisplayName {
		t.Errorf("history %+v", hist.Items)
	}
	for _, id := range []string{"otelcol-contrib", "otelcol-contrib/v0.171.0", "Otel/0.171.0"} { // no release has these ids
		if p := decode[page.Page[auditView]](t, h.do(get("/api/v1/audit?targetType=release&targetId="+id, RoleViewer))); len(p.Items) != 0 {
			t.Errorf("audit of %s: %+v", id, p.Items)
		}
	}
}

func TestPutRelease_Prerelease(t *testing.T) {
	h := newHarness(t)
	rep := h.do(put("/api/v1/releases/otelcol-contrib/0.171.0-rc.1", RoleAdmin, `{}`))
	if rep.status != http.StatusCreated {
		t.Fatalf("status %d: %s", rep.status, rep.body)
	}
	if v := decode[schema.Release](t, rep); !v.Prerelease || v.Latest {
		t.Errorf("release candidate %+v: a prerelease, never the latest", v)
	}
}

func TestPutRelease_BadInputChangesNothing(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{name: "platform not os/arch", path: "/api/v1/releases/otelcol-contrib/0.171.0", body: `{"platforms": ["linux-amd64"]}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "unknown field", path: "/api/v1/releases/otelcol-contrib/0.171.0", body: `{"prerelease": true}`, status: http.StatusBadRequest, code: CodeRequestInvalid}, // the version decides
		{name: "time not RFC 3339", path: "/api/v1/releases/otelcol-contrib/0.171.0", body: `{"publishedAt": "yesterday"}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "null body", path: "/api/v1/releases/otelcol-contrib/0.171.0", body: `null`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "too many platforms", path: "/api/v1/releases/otelcol-contrib/0.171.0", body: `{"platforms": [` + strings.Repeat(`"linux/amd64",`, 64) + `"linux/arm64"]}`, status: http.StatusBadRequest, code: CodeRequestInvalid},
		{name: "version with v", path: "/api/v1/releases/otelcol-contrib/v0.171.0", body: `{}`, status: http.StatusNotFound, code: CodeReleaseNotFound},
		{name: "version not strict", path: "/api/v1/releases/otelcol-contrib/0.171", body: `{}`, status: http.StatusNotFound, code: CodeReleaseNotFound},
		{name: "distribution in capitals", path: "/api/v1/releases/Otelcol/0.171.0", body: `{}`, status: http.StatusNotFound, code: CodeReleaseNotFound},
		{name: "distribution too long", path: "/api/v1/releases/" + strings.Repeat("a", 101) + "/0.171.0", body: `{}`, status: http.StatusNotFound, code: CodeReleaseNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			audits := h.store.auditLen()
			wantProblem(t, h.do(put(c.path, RoleAdmin, c.body)), c.status, c.code)
			if h.store.count() != 0 || h.store.auditLen() != audits {
				t.Errorf("a refused put stored %d releases, %d audit entries", h.store.count(), h.store.auditLen()-audits)
			}
		})
	}
	p := wantProblem(t, h.do(put("/api/v1/releases/otelcol-contrib/v0.171.0", RoleAdmin, `{}`)), http.StatusNotFound, CodeReleaseNotFound)
	if !strings.Contains(p.Detail, `without "v"`) {
		t.Errorf("detail %q should say what a version looks like", p.Detail)
	}
	wantProblem(t, h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`).withContentType("text/plain")), http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
}

func (r req) withContentType(ct string) req { r.contentType = ct; return r }

func TestPutRelease_ViewersAndOperatorsCannot(t *testing.T) {
	h := newHarness(t)
	for _, role := range []Role{RoleViewer, RoleOperator} {
		p := wantProblem(t, h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", role, `{}`)), http.StatusForbidden, CodeForbidden)
		if p.Permission != PermManageReleases {
			t.Errorf("%s: permission %q", role, p.Permission)
		}
	}
	if h.store.count() != 0 || h.store.auditLen() != 0 {
		t.Errorf("a forbidden put stored something")
	}
}

func TestPutRelease_LostRacesAre409(t *testing.T) {
	h := newHarness(t)
	h.store.ReleaseConflicts = selectAttempts
	wantProblem(t, h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`)), http.StatusConflict, CodeConflict)
	if e := h.store.lastAudit(); e.Action != ActionReleasePut || e.Result != audit.ResultFailure || e.Details["code"] != CodeConflict {
		t.Errorf("audit %+v", e)
	}
	h.store.ReleaseConflicts = selectAttempts - 1 // the last attempt wins
	if rep := h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`)); rep.status != http.StatusCreated {
		t.Errorf("status %d after %d lost races: %s", rep.status, selectAttempts-1, rep.body)
	}
}

func TestDeleteRelease(t *testing.T) {
	h := newHarness(t)
	wantStatus := func(rep reply, status int) {
		t.Helper()
		if rep.status != status {
			t.Fatalf("status %d, want %d: %s", rep.status, status, rep.body)
		}
	}
	wantStatus(h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`)), http.StatusCreated)
	rep := h.do(del("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin))
	wantStatus(rep, http.StatusNoContent)
	if len(rep.body) != 0 || rep.header.Get("Content-Type") != "" {
		t.Errorf("204 with body %q, content type %q", rep.body, rep.header.Get("Content-Type"))
	}
	if _, ok := h.store.stored("otelcol-contrib/0.171.0"); ok {
		t.Error("still stored")
	}
	if e := h.store.lastAudit(); e.Action != ActionReleaseDelete || e.Result != audit.ResultSuccess || e.Details["source"] != "admin" || e.Details["configured"] != false {
		t.Errorf("audit %+v", e)
	}
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/0.171.0", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound)

	// Gone is a 404, not audited: no release whose history it would be.
	audits := h.store.auditLen()
	wantProblem(t, h.do(del("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin)), http.StatusNotFound, CodeReleaseNotFound)
	if h.store.auditLen() != audits {
		t.Error("the 404 was audited")
	}

	// A configured release is the configuration's: 409, audited.
	p := wantProblem(t, h.do(del("/api/v1/releases/otelcol-contrib/0.161.0", RoleAdmin)), http.StatusConflict, CodeReleaseConfigured)
	if !strings.Contains(p.Detail, "MYRIARCH_RELEASES") {
		t.Errorf("detail %q should say where to remove it", p.Detail)
	}
	if e := h.store.lastAudit(); e.Result != audit.ResultFailure || e.Details["code"] != CodeReleaseConfigured {
		t.Errorf("audit of the refusal %+v", e)
	}

	// Deleting an entry that shadows a configured release shows the configured one again.
	wantStatus(h.do(put("/api/v1/releases/otelcol-contrib/0.161.0", RoleAdmin, `{"platforms": ["linux/s390x"]}`)), http.StatusCreated)
	wantStatus(h.do(del("/api/v1/releases/otelcol-contrib/0.161.0", RoleAdmin)), http.StatusNoContent)
	if e := h.store.lastAudit(); e.Details["configured"] != true {
		t.Errorf("audit %+v: the configured release remains", e.Details)
	}
	v := decode[schema.ReleaseDetail](t, h.do(get("/api/v1/releases/otelcol-contrib/0.161.0", RoleViewer)))
	if v.Source != releases.SourceConfig || !reflect.DeepEqual(v.Platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("after the delete %+v, want the configured release", v.Release)
	}

	h.store.ReleaseConflicts = selectAttempts
	wantStatus(h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`)), http.StatusConflict)
	h.store.ReleaseConflicts = 0
	wantStatus(h.do(put("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin, `{}`)), http.StatusCreated)
	h.store.ReleaseConflicts = selectAttempts
	wantProblem(t, h.do(del("/api/v1/releases/otelcol-contrib/0.171.0", RoleAdmin)), http.StatusConflict, CodeConflict)
}

func TestGetRelease_UpdatableFleets(t *testing.T) {
	h := newHarness(t)
	h.seedAgents()
	files := fixtureFiles()
	files["fleets/gw.yaml"] = `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: gw}
spec:
  selector: {matchAttributes: {labels.fleet: gw}}
  collector: {distribution: otelcol, version: 0.161.0}
`
	files["configs/gw.yaml"] = "receivers: {}\n"
	wantOK(t, h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "9f3c2a17", files))))

	type option struct {
		fleet, target              string
		behind, selectable         bool
		reasonCode, notAllowedCode string
	}
	options := func(version string) []option {
		t.Helper()
		rep := h.do(get("/api/v1/releases/otelcol-contrib/"+version, RoleViewer))
		wantOK(t, rep)
		v := decode[schema.ReleaseDetail](t, rep)
		if v.Version != version || v.Distribution != "otelcol-contrib" {
			t.Errorf("release %+v", v.Release)
		}
		var out []option
		for _, o := range v.UpdatableFleets {
			out = append(out, option{o.Fleet, o.Target.Version + " " + string(o.Target.Source), o.Behind, o.Selectable, o.ReasonCode, o.NotAllowedCode})
		}
		return out
	}
	tests := []struct {
		version string
		want    []option
	}{
		{version: "0.162.0", want: []option{
			{fleet: "core", target: "0.161.0 git", behind: true, reasonCode: selection.ReasonOutsideFrame, notAllowedCode: selection.NotAllowedSelectionDisabled}, // no frame at all
			{fleet: "edge", target: "0.161.0 git", behind: true, selectable: true},
		}},
		{version: "0.161.0", want: []option{
			{fleet: "core", target: "0.161.0 git", reasonCode: selection.ReasonCurrentTarget, notAllowedCode: selection.NotAllowedSelectionDisabled},
			{fleet: "edge", target: "0.161.0 git", reasonCode: selection.ReasonCurrentTarget},
		}},
		{version: "0.160.0", want: []option{
			{fleet: "core", target: "0.161.0 git", reasonCode: selection.ReasonOutsideFrame, notAllowedCode: selection.NotAllowedSelectionDisabled},
			{fleet: "edge", target: "0.161.0 git", reasonCode: selection.ReasonOutsideFrame},
		}},
		{version: "0.163.0-rc.1", want: []option{
			{fleet: "core", target: "0.161.0 git", behind: true, reasonCode: selection.ReasonOutsideFrame, notAllowedCode: selection.NotAllowedSelectionDisabled},
			{fleet: "edge", target: "0.161.0 git", behind: true, reasonCode: selection.ReasonOutsideFrame},
		}},
	}
	for _, tt := range tests {
		if got := options(tt.version); !reflect.DeepEqual(got, tt.want) { // gw is otelcol: not listed
			t.Errorf("%s:\n got %+v\nwant %+v", tt.version, got, tt.want)
		}
	}
	// After a choice the fleet's target is the UI's.
	wantOK(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.162.0"}`)))
	if got := options("0.162.0"); got[1] != (option{fleet: "edge", target: "0.162.0 ui", reasonCode: selection.ReasonCurrentTarget}) {
		t.Errorf("edge after the choice %+v", got[1])
	}
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/0.150.0", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound)
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/latest", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound)
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/0.162.0?fleet=edge", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
}

func TestVersionOptions_ReadTheStoredCatalogue(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	rep := h.do(put("/api/v1/releases/otelcol-contrib/0.161.5", RoleAdmin, `{"platforms": ["linux/s390x"]}`))
	if rep.status != http.StatusCreated {
		t.Fatalf("%d %s", rep.status, rep.body)
	}
	v := decode[schema.VersionOptions](t, h.do(get("/api/v1/fleets/edge/version-options", RoleViewer)))
	var versions []string
	for _, o := range v.Options {
		versions = append(versions, o.Version)
	}
	if !reflect.DeepEqual(versions, []string{"0.162.0", "0.161.5", "0.161.0"}) || !reflect.DeepEqual(v.Platforms, []string{"linux/amd64", "linux/arm64", "linux/s390x"}) {
		t.Errorf("options %v platforms %v, want the stored release too", versions, v.Platforms)
	}
	wantOK(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.161.5"}`)))
	// A release only the catalogue of another distribution has is unknown here.
	rep = h.do(put("/api/v1/releases/otelcol/0.161.7", RoleAdmin, `{}`))
	if rep.status != http.StatusCreated {
		t.Fatalf("%d %s", rep.status, rep.body)
	}
	p := wantProblem(t, h.do(post("/api/v1/fleets/edge/actions/select-version", RoleOperator, `{"version": "0.161.7"}`)), http.StatusUnprocessableEntity, CodeSelectionRejected)
	if len(p.Issues) == 0 || p.Issues[0].Code != "unknown_version" {
		t.Errorf("issues %+v, want unknown_version", p.Issues)
	}
}

func TestLatestReleaseFleets(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	rep := h.do(get("/api/v1/releases/otelcol-contrib/latest/fleets", RoleViewer))
	wantOK(t, rep)
	v := decode[schema.LatestReleaseFleets](t, rep)
	if v.Latest.Version != "0.170.0" || !v.Latest.Latest || len(v.Fleets) != 2 {
		t.Fatalf("latest %+v", v)
	}
	if core, edge := v.Fleets[0], v.Fleets[1]; core.Fleet != "core" || edge.Fleet != "edge" || !edge.Behind || edge.Selectable ||
		edge.ReasonCode != selection.ReasonOutsideFrame || core.NotAllowedCode != selection.NotAllowedSelectionDisabled {
		t.Errorf("fleets %+v", v.Fleets)
	}
	// A newer prerelease is not the latest; a newer release is, and edge's frame does not reach it.
	if rep := h.do(put("/api/v1/releases/otelcol-contrib/0.180.0-rc.1", RoleAdmin, `{}`)); rep.status != http.StatusCreated {
		t.Fatal(rep.status)
	}
	if v := decode[schema.LatestReleaseFleets](t, h.do(get("/api/v1/releases/otelcol-contrib/latest/fleets", RoleViewer))); v.Latest.Version != "0.170.0" {
		t.Errorf("latest %s, want 0.170.0: a prerelease is never the latest", v.Latest.Version)
	}
	// A fleet on the latest is not behind.
	h.store.Lock()
	f := h.store.FleetsByName["core"]
	f.Collector.Version = "0.170.0"
	h.store.FleetsByName["core"] = f
	h.store.Unlock()
	if v := decode[schema.LatestReleaseFleets](t, h.do(get("/api/v1/releases/otelcol-contrib/latest/fleets", RoleViewer))); len(v.Fleets) != 1 || v.Fleets[0].Fleet != "edge" {
		t.Errorf("fleets %+v, want only edge behind", v.Fleets)
	}
	wantProblem(t, h.do(get("/api/v1/releases/Otel/latest/fleets", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound)
}

func TestLatestReleaseFleets_NoReleaseIs404(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Catalog = nil })
	h.applyFixture()
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/latest/fleets", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound)
	if rep := h.do(put("/api/v1/releases/otelcol-contrib/0.163.0-rc.1", RoleAdmin, `{}`)); rep.status != http.StatusCreated {
		t.Fatal(rep.status)
	}
	wantProblem(t, h.do(get("/api/v1/releases/otelcol-contrib/latest/fleets", RoleViewer)), http.StatusNotFound, CodeReleaseNotFound) // only a prerelease
	sum := decode[schema.ReleaseSummary](t, h.do(get("/api/v1/releases/summary", RoleViewer)))
	if len(sum.Distributions) != 1 || sum.Distributions[0].Latest != "" || sum.Distributions[0].Collectors.Unknown != 5 || sum.Distributions[0].FleetsBehind != 0 {
		t.Errorf("summary without a latest release %+v", sum)
	}
}

func TestReleaseSummary_OutdatedCollectors(t *testing.T) {
	h := newHarness(t)
	if sum := decode[schema.ReleaseSummary](t, h.do(get("/api/v1/releases/summary", RoleViewer))); len(sum.Distributions) != 0 {
		t.Errorf("before any revision %+v", sum)
	}
	h.applyFixture()
	h.store.Lock()
	for id, v := range map[string]string{"e2": "0.170.0", "e3": "", "e4": "v0.180.0", "u1": "0.100.0"} { // u1 is in no fleet
		a := h.store.Agents[id]
		a.ServiceVersion = v
		h.store.Agents[id] = a
	}
	h.store.Unlock()
	rep := h.do(get("/api/v1/releases/summary", RoleViewer))
	wantOK(t, rep)
	sum := decode[schema.ReleaseSummary](t, rep)
	want := schema.ReleaseSummary{Distributions: []schema.DistributionSummary{{
		Distribution: "otelcol-contrib", Latest: "0.170.0", Fleets: 2, FleetsBehind: 2,
		Collectors: schema.CollectorCounts{Total: 5, OnLatest: 1, Behind: 2, Ahead: 1, Unknown: 1}, // e1, c1 on 0.161.0 behind; e3 reports nothing
		Versions:   []schema.VersionCount{{Version: "0.180.0", Collectors: 1}, {Version: "0.170.0", Collectors: 1}, {Version: "0.161.0", Collectors: 2, Behind: true}},
	}}}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("summary\n got %+v\nwant %+v", sum, want)
	}
	wantProblem(t, h.do(get("/api/v1/releases/summary?distribution=x", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
}
