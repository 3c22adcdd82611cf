package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/revision"
)

func TestApplyRevision_StoresAssignsBootstrapsAndPlans(t *testing.T) {
	h := newHarness(t)
	h.seedAgents()
	rep := h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "9f3c2a17", fixtureFiles())))
	wantOK(t, rep)
	res := decode[applyResult](t, rep)
	if res.Agents.Total != 6 || res.Agents.Assigned != 5 || res.Agents.Moved != 5 || res.Agents.Unassigned != 1 {
		t.Errorf("agents %+v, want 6: 5 assigned (moved from none), u1 unassigned", res.Agents)
	}
	plans := map[string]schema.PlanResult{}
	for _, fp := range res.Fleets {
		for _, p := range fp.Plans {
			plans[fp.Fleet+"/"+string(p.Kind)] = p
		}
	}
	if p := plans["edge/config"]; !p.Planned || !p.Created || p.RolloutID == "" {
		t.Errorf("edge config %+v, want a created rollout", p)
	}
	if p := plans["edge/version"]; !p.Planned || p.RolloutID != "" {
		t.Errorf("edge version %+v, want planned and no rollout (every agent runs 0.161.0)", p)
	}
	if p := plans["core/config"]; !p.Planned || p.Created || p.Bootstrapped != 1 || p.Note != "no rollout: no agent is relevant" {
		t.Errorf("core config %+v, want planned without a rollout, c1 bootstrapped", p)
	}
	if p := plans["edge/config"]; p.Bootstrapped != 0 {
		t.Errorf("edge config %+v, want nobody bootstrapped (every agent had a configuration)", p)
	}
	if p := plans["core/version"]; p.Bootstrapped != 0 {
		t.Errorf("core version %+v: bootstrapping is a configuration's", p)
	}
	coreHash := revision.Hash([]byte(fixtureFiles()["configs/core.yaml"]))
	if got := h.store.Agents["c1"].DesiredHash; got != coreHash {
		t.Errorf("c1 desired hash %q, want the core configuration %q (bootstrap)", got, coreHash)
	}
	if got := h.store.Agents["e2"].Fleet; got != "edge" {
		t.Errorf("e2 is in fleet %q, want edge", got)
	}
	if e := h.store.lastAudit(); e.Action != ActionRevisionApply || e.Actor != admin.Actor || e.Result != audit.ResultSuccess || e.TargetID != "9f3c2a17" {
		t.Errorf("audit %+v", e)
	}
}

func TestApplyRevision_RemovedFleetIsPlannedAndItsAgentsLeave(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	files := fixtureFiles()
	delete(files, "fleets/core.yaml")
	delete(files, "configs/core.yaml")
	res := decode[applyResult](t, h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "a1b2c3d4", files))))
	var core *schema.FleetPlan
	for i := range res.Fleets {
		if res.Fleets[i].Fleet == "core" {
			core = &res.Fleets[i]
		}
	}
	if core == nil || !core.Removed || len(core.Plans) != 2 {
		t.Fatalf("fleets %+v, want core removed and planned for both kinds", res.Fleets)
	}
	if got := h.store.Agents["c1"].Fleet; got != "" || res.Agents.Moved != 1 {
		t.Errorf("c1 in fleet %q, %d moved; want c1 unassigned, 1 moved", got, res.Agents.Moved)
	}
}

func TestApplyRevision_AgentOfTwoFleetsBelongsToNone(t *testing.T) {
	h := newHarness(t)
	h.seedAgents()
	files := fixtureFiles()
	// edge2 selects exactly what edge selects: the agents match two fleets equally well.
	files["fleets/edge2.yaml"] = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: edge2}\n" +
		"spec:\n  selector: {matchAttributes: {labels.fleet: edge}}\n"
	res := decode[applyResult](t, h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "c0ffee00", files))))
	if len(res.Agents.Conflicts) != 4 || h.store.Agents["e1"].Fleet != "" {
		t.Errorf("conflicts %+v, e1 in %q; want e1..e4 in conflict and unassigned", res.Agents.Conflicts, h.store.Agents["e1"].Fleet)
	}
}

func TestApplyRevision_OneBadObjectAppliesNothing(t *testing.T) {
	h := newHarness(t)
	h.applyFixture()
	files := fixtureFiles()
	files["fleets/broken.yaml"] = strings.Replace(coreFleet, "name: core", "name: broken", 1) + "  rollout: {configPolicy: missing}\n"
	before, audits := h.store.snapshot(), h.store.auditLen()
	p := wantProblem(t, h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "deadbeef", files))), 422, CodeRevisionInvalid)
	if len(p.Issues.Errors()) == 0 || p.Issues.Errors()[0].Path == "" {
		t.Errorf("issues %+v, want the errors with their file paths", p.Issues)
	}
	if h.store.snapshot() != before {
		t.Errorf("an invalid revision changed the store")
	}
	if h.store.auditLen() != audits+1 || h.store.lastAudit().Result != audit.ResultFailure {
		t.Errorf("want one failed revision.apply entry, got %+v", h.store.lastAudit())
	}
	cur := decode[schema.Revision](t, h.do(get("/api/v1/revisions/current", RoleViewer)))
	if cur.Commit != "9f3c2a17" {
		t.Errorf("current revision %s, want the previous one", cur.Commit)
	}
}

func TestValidateRevision_ReportsAndStoresNothing(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name  string
		files map[string]string
		valid bool
	}{
		{name: "the fixture", files: fixtureFiles(), valid: true},
		{name: "a fleet naming a missing policy", files: map[string]string{"fleets/core.yaml": coreFleet + "  rollout: {configPolicy: missing}\n"}, valid: false},
		{name: "no fleet", files: map[string]string{}, valid: false},
	}
	for _, c := range cases {
		before, audits := h.store.snapshot(), h.store.auditLen()
		rep := h.do(post("/api/v1/revisions/validate", RoleViewer, revisionBody(t, "9f3c2a17", c.files)))
		wantOK(t, rep)
		v := decode[schema.Validation](t, rep)
		if v.Valid != c.valid || (!c.valid && len(v.Issues.Errors()) == 0) {
			t.Errorf("%s: valid %v issues %+v, want valid %v", c.name, v.Valid, v.Issues, c.valid)
		}
		if h.store.snapshot() != before || h.store.auditLen() != audits {
			t.Errorf("%s: validation changed the store", c.name)
		}
	}
}

func TestCurrentRevision_WhoAppliedWhat(t *testing.T) {
	h := newHarness(t)
	wantProblem(t, h.do(get("/api/v1/revisions/current", RoleViewer)), http.StatusNotFound, CodeRevisionNotFound)
	h.applyFixture()
	v := decode[schema.Revision](t, h.do(get("/api/v1/revisions/current", RoleViewer)))
	if v.Commit != "9f3c2a17" || v.AppliedBy != "CI pipeline" || join(v.Fleets) != "core,edge" || join(v.Policies) != "canary-then-all" || len(v.Configs) != 2 {
		t.Errorf("current revision %+v", v)
	}
}

func TestRevisions_BodyRules(t *testing.T) {
	big := strings.Repeat("#", 2<<20) // 2 MiB: over the 1 MiB of other bodies, under the 6 MiB of revisions
	cases := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{name: "no commit", path: "/api/v1/revisions", body: `{"files": {}}`, status: 400, code: CodeRequestInvalid},
		{name: "empty commit", path: "/api/v1/revisions", body: `{"commit": "", "files": {}}`, status: 400, code: CodeRequestInvalid},
		{name: "no files", path: "/api/v1/revisions", body: `{"commit": "x"}`, status: 400, code: CodeRequestInvalid},
		{name: "null body", path: "/api/v1/revisions", body: `null`, status: 400, code: CodeRequestInvalid},
		{name: "commit over 128 characters", path: "/api/v1/revisions", body: `{"commit": "` + strings.Repeat("c", MaxCommitLength+1) + `", "files": {}}`, status: 400, code: CodeRequestInvalid},
		{name: "commit over 128 characters, validate", path: "/api/v1/revisions/validate", body: `{"commit": "` + strings.Repeat("c", 5000) + `", "files": {}}`, status: 400, code: CodeRequestInvalid},
		{name: "commit of 128 characters is fine", path: "/api/v1/revisions/validate", body: `{"commit": "` + strings.Repeat("c", MaxCommitLength) + `", "files": {}}`, status: 200, code: ""},
		{name: "files not text", path: "/api/v1/revisions", body: `{"commit": "x", "files": {"fleets/a.yaml": 1}}`, status: 400, code: CodeRequestInvalid},
		{name: "over 6 MiB", path: "/api/v1/revisions", body: `{"commit": "x", "files": {"configs/a.yaml": "` + strings.Repeat("#", 6<<20) + `"}}`, status: 413, code: CodeBodyTooLarge},
		// 5.8 MiB of body, but each backslash is escaped again in API
		// Gateway's proxy event: 11.6 MiB, which no Lambda request carries
		{name: "escaped beyond the Lambda request", path: "/api/v1/revisions/validate", body: `{"commit": "x", "files": {"configs/a.yaml": "` + strings.Repeat(`\\`, 2900<<10) + `"}}`, status: 413, code: CodeBodyTooLarge},
		{name: "2 MiB is fine", path: "/api/v1/revisions/validate", body: `{"commit": "x", "files": {"configs/a.yaml": "` + big + `"}}`, status: 200, code: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			before := h.store.snapshot()
			rep := h.do(post(c.path, RoleAdmin, c.body))
			if c.status == 200 {
				wantOK(t, rep)
				return
			}
			wantProblem(t, rep, c.status, c.code)
			if h.store.snapshot() != before || h.store.auditLen() != 0 {
				t.Errorf("bad input changed the store")
			}
		})
	}
}

// Validation and apply run the same checks: what /revisions/validate calls
// an error, /revisions refuses with 422 and the same issue, storing nothing.
func TestRevisions_ValidateAndApplyAgree(t *testing.T) {
	withFile := func(p, body string) map[string]string {
		files := fixtureFiles()
		files[p] = body
		return files
	}
	cases := []struct {
		name  string
		files map[string]string
		code  string // the issue both must report
		path  string // where
	}{
		{name: "fleet name with a slash", files: withFile("fleets/core.yaml", strings.Replace(coreFleet, "name: core", "name: core/eu", 1)), code: "name_invalid", path: "fleets/core.yaml: metadata.name"},
		{name: "fleet name out of its directory", files: withFile("fleets/core.yaml", strings.Replace(coreFleet, "name: core", "name: ../../x", 1)), code: "name_invalid", path: "fleets/core.yaml: metadata.name"},
		{name: "configuration not YAML", files: withFile("configs/edge.yaml", "receivers:\n  otlp: {}\nexporters: debug: {}\n"), code: "config_invalid", path: "configs/edge.yaml"},
		{name: "configuration a key twice", files: withFile("configs/core.yaml", "receivers: {}\nreceivers: {}\n"), code: "config_invalid", path: "configs/core.yaml"},
		{name: "configuration over the limit", files: withFile("configs/edge.yaml", configYAML(revision.MaxConfigBytes+1)), code: "config_too_large", path: "configs/edge.yaml"},
		{name: "files over the limit together", files: withFiles(fixtureFiles(), map[string]string{"configs/edge.yaml": configYAML(revision.MaxConfigBytes), "configs/core.yaml": configYAML(revision.MaxBytes - revision.MaxConfigBytes)}), code: "revision_too_large", path: ""},
		{name: "fleet name not ASCII", files: withFile("fleets/core.yaml", strings.Replace(coreFleet, "name: core", "name: cöre", 1)), code: "name_invalid", path: "fleets/core.yaml: metadata.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.seedAgents()
			body := revisionBody(t, "c0ffee00", c.files)
			v := decode[schema.Validation](t, h.do(post("/api/v1/revisions/validate", RoleViewer, body)))
			if v.Valid || !hasIssue(v.Issues, c.code, c.path) {
				t.Errorf("validate: valid %v, issues %+v; want invalid with %s at %s", v.Valid, v.Issues, c.code, c.path)
			}
			before := h.store.snapshot()
			p := wantProblem(t, h.do(post("/api/v1/revisions", RoleAdmin, body)), 422, CodeRevisionInvalid)
			if !hasIssue(p.Issues, c.code, c.path) {
				t.Errorf("apply: issues %+v, want %s at %s", p.Issues, c.code, c.path)
			}
			if h.store.snapshot() != before {
				t.Errorf("a refused revision changed the store")
			}
		})
	}
}

// A configuration of 1 MB, several of them, and revisions at the limits
// validate and apply; the limits leave room in the API's body for the
// JSON around the files.
func TestRevisions_LargeConfigurationsApply(t *testing.T) {
	if revision.MaxBytes >= MaxRevisionBodyBytes {
		t.Fatalf("a revision of MaxBytes (%d) does not fit the body limit (%d) with its JSON", revision.MaxBytes, MaxRevisionBodyBytes)
	}
	cases := []struct {
		name  string
		files map[string]string
	}{
		{name: "a configuration of 1 MB", files: withFiles(fixtureFiles(), map[string]string{"configs/edge.yaml": configYAML(1 << 20)})},
		{name: "two configurations of 1 MB", files: withFiles(fixtureFiles(), map[string]string{"configs/edge.yaml": configYAML(1 << 20), "configs/core.yaml": configYAML(1<<20 + 1)})},
		{name: "a configuration at the limit", files: withFiles(fixtureFiles(), map[string]string{"configs/edge.yaml": configYAML(revision.MaxConfigBytes)})},
		{name: "files at the limit together", files: withFiles(fixtureFiles(), map[string]string{"configs/edge.yaml": configYAML(revision.MaxConfigBytes),
			"configs/core.yaml": configYAML(revision.MaxBytes - revision.MaxConfigBytes - len(edgeFleet) - len(coreFleet) - len(canaryPolicy))})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.seedAgents()
			body := revisionBody(t, "c0ffee00", c.files)
			v := decode[schema.Validation](t, h.do(post("/api/v1/revisions/validate", RoleViewer, body)))
			if !v.Valid {
				t.Fatalf("validate: issues %+v, want valid", v.Issues)
			}
			wantOK(t, h.do(post("/api/v1/revisions", RoleAdmin, body)))
			cur := decode[schema.Revision](t, h.do(get("/api/v1/revisions/current", RoleViewer)))
			if want := revision.Hash([]byte(c.files["configs/edge.yaml"])); cur.Commit != "c0ffee00" || cur.Configs["edge"] != want {
				t.Errorf("current revision %+v, want c0ffee00 with edge at %s", cur, want)
			}
		})
	}
}

// configYAML is a collector configuration of exactly n bytes (n >= 12),
// lines of ordinary YAML that JSON escapes only at the newline.
func configYAML(n int) string {
	var b strings.Builder
	b.WriteString("receivers:\n")
	for i := 0; ; i++ {
		line := fmt.Sprintf("  r%07d: {}\n", i)
		if b.Len()+len(line) > n {
			break
		}
		b.WriteString(line)
	}
	if r := n - b.Len(); r > 0 {
		b.WriteString(strings.Repeat("#", r-1) + "\n")
	}
	return b.String()
}

func withFiles(files, extra map[string]string) map[string]string {
	for p, body := range extra {
		files[p] = body
	}
	return files
}

func hasIssue(l issue.List, code, path string) bool {
	for _, is := range l {
		if is.Code == code && is.Path == path && is.Severity == issue.Error {
			return true
		}
	}
	return false
}

// An apply that runs out of time before the sweep (a budget of zero) or
// whose sweep a store error stops keeps the revision applied, says that its
// summary is partial, and the sweep it recorded assigns the remaining
// agents when the planner's minute continues it; the apply that swept
// everyone says complete.
func TestApplyRevision_InterruptedSweepIsPartialAndTheTickFinishesIt(t *testing.T) {
	cases := []struct {
		name     string
		opt      func(*Deps)
		failPage bool
		total    int
	}{
		{name: "a budget of zero", opt: func(d *Deps) { d.AssignTimeout = -1 }, total: 0},
		{name: "a store error on the first page", failPage: true, total: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := []func(*Deps){}
			if c.opt != nil {
				opts = append(opts, c.opt)
			}
			h := newHarness(t, opts...)
			h.seedAgents()
			if c.failPage {
				h.store.Fail("AssignPage", errors.New("ProvisionedThroughputExceededException"))
			}
			rep := h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "9f3c2a17", fixtureFiles())))
			wantOK(t, rep)
			res := decode[applyResult](t, rep)
			if res.Agents.Complete || res.Agents.Total != c.total {
				t.Fatalf("agents %+v, want a partial summary (complete false) of %d agents", res.Agents, c.total)
			}
			if got := h.store.Agents["e2"].Fleet; got != "" {
				t.Fatalf("e2 in fleet %q before the tick, want none yet", got)
			}
			h.store.Fail("AssignPage", nil)
			tick := assignment.Runner{Store: h.store, Clock: h.clock, PageSize: 2}
			sw, err := tick.Sweep(context.Background(), h.clock().Add(time.Minute))
			if err != nil || !sw.Done || sw.Scanned != 6 || sw.Moved != 5 {
				t.Fatalf("the tick's sweep %+v (%v), want done over the 6 agents, 5 moved", sw, err)
			}
			if got := h.store.Agents["e2"].Fleet; got != "edge" {
				t.Errorf("e2 in fleet %q after the tick, want edge", got)
			}
			if sw, _ := tick.Sweep(context.Background(), h.clock().Add(time.Minute)); sw.Scanned != 0 || !sw.Done {
				t.Errorf("a second tick swept %+v, want nothing: the sweep is done", sw)
			}
		})
	}
	h := newHarness(t)
	h.seedAgents()
	rep := h.do(post("/api/v1/revisions", RoleAdmin, revisionBody(t, "9f3c2a17", fixtureFiles())))
	wantOK(t, rep)
	if res := decode[applyResult](t, rep); !res.Agents.Complete || res.Agents.Total != 6 {
		t.Errorf("agents %+v, want complete over the 6 agents", res.Agents)
	}
}

// escapedJSONLen measures a body as encoding/json would write it as a
// string, without HTML escaping (what API Gateway's event holds).
func TestEscapedJSONLen_AsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and backslash \\`, "lines\nand\ttabs\r", "control \x01\x1f", strings.Repeat("a: \"b\"\n", 1000)} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := escapedJSONLen([]byte(s)), b.Len()-1; got != want { // Encode adds a newline
			t.Errorf("%q: %d, encoding/json writes %d", s, got, want)
		}
	}
}
