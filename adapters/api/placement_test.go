package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/myriarch/myriarch/adapters/api/schema"
	apidoc "github.com/myriarch/myriarch/api"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// seedCanaryThenZones stores r-canary of fleet edge, with its agents: the
// canary wave is not split and holds c0 (eu-1, eu-1a) and c1 (us-1,
// us-1b), one per batch; the wave rest splits by zone into rest/eu-1a (z0,
// z1, one per batch) and rest/eu-1b (z2). The canary stage is running with
// its first batch succeeded. It returns the stored targets.
func seedCanaryThenZones(t *testing.T, h *harness) []rollout.Target {
	t.Helper()
	one := policy.Amount{Value: 1}
	spec := policy.Spec{Waves: []policy.Wave{
		{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.canary": "true"}}, MaxUnavailable: one},
		{Name: "rest", Percent: 100, By: policy.SplitZone, Bake: 10 * time.Minute, MaxUnavailable: one}}}
	snap := policy.Policy{Name: "canary-zones", Spec: spec}.Snapshot(policy.KindConfig)
	where := map[string][3]string{ // agent: region, zone, canary
		"c0": {"eu-1", "eu-1a", "true"}, "c1": {"us-1", "us-1b", "true"},
		"z0": {"eu-1", "eu-1a"}, "z1": {"eu-1", "eu-1a"}, "z2": {"eu-1", "eu-1b"},
	}
	var cands []engine.Candidate
	for _, id := range []string{"c0", "c1", "z0", "z1", "z2"} {
		w := where[id]
		attrs := map[string]string{"cloud.region": w[0], "cloud.availability_zone": w[1]}
		if w[2] != "" {
			attrs["labels.canary"] = w[2]
		}
		h.store.Agents[id] = agent.Agent{ID: id, Attributes: attrs}
		cands = append(cands, engine.Candidate{AgentID: id, FromRef: "h0", Attributes: selector.Map(attrs)})
	}
	r, ts, err := engine.Create(engine.NewRollout{ID: "r-canary", Fleet: "edge", Kind: policy.KindConfig, Policy: snap, ToRef: "h1",
		Origin: rollout.OriginGitOps, Candidates: cands, Now: h.clock()})
	if err != nil {
		t.Fatal(err)
	}
	if names := stageNames(r); names != "canary,rest/eu-1a,rest/eu-1b" {
		t.Fatalf("stages %s, want canary,rest/eu-1a,rest/eu-1b", names)
	}
	r.Status, r.Stages[0].Status = rollout.Running, rollout.StageRunning
	for i := range ts {
		if ts[i].Stage == 0 && ts[i].Batch == 0 {
			ts[i].Status = rollout.TargetSucceeded
		}
	}
	if err := h.store.CreateRollout(context.Background(), r, ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

func stageNames(r rollout.Rollout) string {
	var out []string
	for _, st := range r.Stages {
		out = append(out, st.Name)
	}
	return join(out)
}

// placementOf is "<stage> <pass>#<batch>", or "-" without a placement.
func placementOf(tv targetView) string {
	if tv.Batch == nil {
		return "-"
	}
	return fmt.Sprintf("%s %s#%d", tv.Stage, tv.Pass, *tv.Batch)
}

// Every target of a rollout in stages says where it sits: its stage's and
// pass's names and its batch, as the engine placed it.
func TestListRolloutTargets_CarriesThePlacement(t *testing.T) {
	h := newHarness(t)
	stored := seedCanaryThenZones(t, h)
	pg := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/r-canary/targets", RoleViewer)))
	got := map[string]string{}
	for _, tv := range pg.Items {
		got[tv.AgentID] = placementOf(tv)
	}
	batch := map[string]int{}
	for _, st := range stored {
		batch[st.AgentID] = st.Batch
	}
	want := map[string]string{
		"c0": fmt.Sprintf("canary canary#%d", batch["c0"]),
		"c1": fmt.Sprintf("canary canary#%d", batch["c1"]),
		"z0": fmt.Sprintf("rest/eu-1a rest/eu-1/eu-1a#%d", batch["z0"]),
		"z1": fmt.Sprintf("rest/eu-1a rest/eu-1/eu-1a#%d", batch["z1"]),
		"z2": "rest/eu-1b rest/eu-1/eu-1b#0",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s placed %q, want %q", id, got[id], w)
		}
	}
	if batch["c0"]+batch["c1"] != 1 || batch["z0"]+batch["z1"] != 1 {
		t.Errorf("batches %v: the canary's and rest/eu-1a's two agents are one per batch", batch)
	}
}

// A rollout without stages has no placement: the fields are absent, not
// empty or zero.
func TestListRolloutTargets_NoPlacementWithoutStages(t *testing.T) {
	h := newHarness(t)
	seedVersionRollout(h, "v-1")
	rep := h.do(get("/api/v1/rollouts/v-1/targets", RoleViewer))
	var raw struct{ Items []map[string]json.RawMessage }
	if err := json.Unmarshal(rep.body, &raw); err != nil || len(raw.Items) != 3 {
		t.Fatalf("decode %s: %v", rep.body, err)
	}
	for _, it := range raw.Items {
		for _, k := range []string{"stage", "pass", "batch"} {
			if v, ok := it[k]; ok {
				t.Errorf("target %s has %s %s, want none", it["agentId"], k, v)
			}
		}
	}
}

// ?stage=<name> lists the targets of that stage, with the other filters
// and paging; empty is no filter, as for wave and status.
func TestListRolloutTargets_ByStage(t *testing.T) {
	h := newHarness(t)
	stored := seedCanaryThenZones(t, h)
	first := "" // the canary's batch 0, succeeded
	for _, st := range stored {
		if st.Stage == 0 && st.Batch == 0 {
			first = st.AgentID
		}
	}
	cases := []struct {
		query string
		stage string // of every target listed
		want  string
	}{
		{query: "?stage=canary", stage: "canary", want: "c0,c1"},                                  // not split: its agents in two regions
		{query: "?stage=rest/eu-1a", stage: "rest/eu-1a", want: "z0,z1"},                          // a stage of a split wave
		{query: "?stage=rest%2Feu-1b", stage: "rest/eu-1b", want: "z2"},                           // the slash escaped
		{query: "?stage=rest/eu-1a&wave=rest", stage: "rest/eu-1a", want: "z0,z1"},                // its own wave
		{query: "?stage=rest/eu-1a&wave=canary", stage: "", want: ""},                             // another wave: both filters, nothing
		{query: "?stage=rest/eu-1a&wave=0", stage: "", want: ""},                                  // the same by index
		{query: "?stage=canary&status=succeeded", stage: "canary", want: first},                   // with a status
		{query: "?stage=rest/eu-1a&status=pending,succeeded", stage: "rest/eu-1a", want: "z0,z1"}, // several statuses
		{query: "?stage=", stage: "", want: "c0,c1,z0,z1,z2"},                                     // empty: no filter
	}
	for _, c := range cases {
		got := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/r-canary/targets"+c.query, RoleViewer)))
		if agents(got.Items) != c.want {
			t.Errorf("%q: %s, want %s", c.query, agents(got.Items), c.want)
		}
		for _, tv := range got.Items {
			if c.stage != "" && tv.Stage != c.stage {
				t.Errorf("%q listed %s of stage %q", c.query, tv.AgentID, tv.Stage)
			}
		}
	}
	var pages []string
	token := ""
	for range 5 {
		p := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/r-canary/targets?stage=rest/eu-1a&limit=1&pageToken="+token, RoleViewer)))
		if len(p.Items) > 0 {
			pages = append(pages, agents(p.Items))
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if got := strings.Join(pages, "|"); got != "z0|z1" {
		t.Errorf("pages of one target of rest/eu-1a: %q, want z0|z1", got)
	}
}

// A stage the rollout does not have is a 400 that names it and lists the
// rollout's stages, rather than an empty page that would look like a
// stage without targets; a rollout without stages says so.
func TestListRolloutTargets_UnknownStageIs400(t *testing.T) {
	h := newHarness(t)
	seedCanaryThenZones(t, h)
	seedVersionRollout(h, "v-1")
	p := wantProblem(t, h.do(get("/api/v1/rollouts/r-canary/targets?stage=eu-1a", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	if want := `rollout r-canary has no stage named "eu-1a"; its stages are "canary", "rest/eu-1a", "rest/eu-1b"`; p.Detail != want ||
		join(p.Stages) != "canary,rest/eu-1a,rest/eu-1b" {
		t.Errorf("detail %q, stages %v; want %q and the three stages", p.Detail, p.Stages, want)
	}
	p = wantProblem(t, h.do(get("/api/v1/rollouts/v-1/targets?stage=canary", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	if want := `rollout v-1 has no stage named "canary"; it has no stages: its waves run whole`; p.Detail != want || p.Stages != nil {
		t.Errorf("detail %q, stages %v; want %q and none", p.Detail, p.Stages, want)
	}
	long := strings.Repeat("x", 100)
	p = wantProblem(t, h.do(get("/api/v1/rollouts/r-canary/targets?stage="+long, RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	if strings.Contains(p.Detail, long) || !strings.Contains(p.Detail, "(100 characters)") {
		t.Errorf("detail %q quotes the whole name", p.Detail)
	}
	wantProblem(t, h.do(get("/api/v1/rollouts/r-404/targets?stage=canary", RoleViewer)), http.StatusNotFound, CodeRolloutNotFound)
	wantProblem(t, h.do(get("/api/v1/rollouts/r-canary/targets?stage=canary&stage=rest/eu-1a", RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
}

// The detail lists the agents of each pass, in batch order, and the
// regions and zones of every pass: a pass that is not split (the canary)
// shows those its agents report, as its gate queries them, instead of
// none.
func TestGetRollout_PassesListTheirAgentsRegionsAndZones(t *testing.T) {
	h := newHarness(t)
	stored := seedCanaryThenZones(t, h)
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/r-canary", RoleViewer)))
	inBatch := func(stage int, ids ...string) string {
		slices.SortFunc(ids, func(a, b string) int { return batchOf(stored, a) - batchOf(stored, b) })
		return join(ids)
	}
	cases := []struct {
		stage          int
		agents         string
		regions, zones string
		region, zone   string
	}{
		{stage: 0, agents: inBatch(0, "c0", "c1"), regions: "eu-1,us-1", zones: "eu-1a,us-1b", region: "", zone: ""},
		{stage: 1, agents: inBatch(1, "z0", "z1"), regions: "eu-1", zones: "eu-1a", region: "eu-1", zone: "eu-1a"},
		{stage: 2, agents: "z2", regions: "eu-1", zones: "eu-1b", region: "eu-1", zone: "eu-1b"},
	}
	for _, c := range cases {
		p := v.Stages[c.stage].Passes[0]
		if join(p.Agents) != c.agents || join(p.Regions) != c.regions || join(p.Zones) != c.zones || p.Region != c.region || p.Zone != c.zone {
			t.Errorf("stage %s pass %s: agents %v regions %v zones %v region %q zone %q; want %s, %s, %s, %q, %q",
				v.Stages[c.stage].Name, p.Name, p.Agents, p.Regions, p.Zones, p.Region, p.Zone, c.agents, c.regions, c.zones, c.region, c.zone)
		}
	}
	list := decode[page.Page[rolloutView]](t, h.do(get("/api/v1/rollouts", RoleViewer)))
	for _, r := range list.Items {
		for _, st := range r.Stages {
			for _, p := range st.Passes {
				if p.Agents != nil || p.Regions != nil || p.Zones != nil {
					t.Errorf("list: pass %s has agents %v regions %v zones %v; only the detail reads targets and agents", p.Name, p.Agents, p.Regions, p.Zones)
				}
			}
		}
	}
}

func batchOf(ts []rollout.Target, id string) int {
	for _, t := range ts {
		if t.AgentID == id {
			return t.Batch
		}
	}
	return -1
}

// An agent that lost its attributes, or was deleted, adds no region or
// zone; a pass none of whose agents reports one shows none.
func TestGetRollout_PassScopeOfAgentsWithoutAttributes(t *testing.T) {
	h := newHarness(t)
	seedCanaryThenZones(t, h)
	h.store.Agents["c0"] = agent.Agent{ID: "c0"}
	delete(h.store.Agents, "c1")
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/r-canary", RoleViewer)))
	if p := v.Stages[0].Passes[0]; p.Regions != nil || p.Zones != nil || len(p.Agents) != 2 {
		t.Errorf("canary pass regions %v zones %v agents %v; want no region or zone, both agents", p.Regions, p.Zones, p.Agents)
	}
	if p := v.Stages[1].Passes[0]; join(p.Regions) != "eu-1" || join(p.Zones) != "eu-1a" {
		t.Errorf("rest/eu-1a regions %v zones %v: a split pass keeps its own", p.Regions, p.Zones)
	}
}

// When the agents cannot be read the detail is still shown: split passes
// keep their own region and zone, the canary shows none, and there is no
// prediction.
func TestGetRollout_PassScopesWhenTheAgentsCannotBeRead(t *testing.T) {
	h := newHarness(t)
	seedCanaryThenZones(t, h)
	h.store.Fail("AgentsByID", errors.New("throttled"))
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/r-canary", RoleViewer)))
	if p := v.Stages[0].Passes[0]; p.Regions != nil || p.Zones != nil || len(p.Agents) != 2 {
		t.Errorf("canary pass regions %v zones %v agents %v; want no region or zone, both agents (from the targets)", p.Regions, p.Zones, p.Agents)
	}
	if p := v.Stages[1].Passes[0]; join(p.Regions) != "eu-1" || join(p.Zones) != "eu-1a" {
		t.Errorf("rest/eu-1a regions %v zones %v: a split pass keeps its own", p.Regions, p.Zones)
	}
	if v.Prediction != nil {
		t.Errorf("prediction %+v without the agents", v.Prediction)
	}
}

// The regions and zones a pass shows are those its stage gate queries
// (engine.GateRequest): for a pass that is not split, a pass split by
// region (its zones from its agents) and one split by zone.
func TestPassScopes_AreWhatTheGateQueries(t *testing.T) {
	one := policy.Amount{Value: 1}
	spec := policy.Spec{Waves: []policy.Wave{
		{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.canary": "true"}}, MaxUnavailable: one},
		{Name: "eu", Selector: &selector.Selector{MatchAttributes: map[string]string{"cloud.region": "eu-1"}}, By: policy.SplitZone, MaxUnavailable: one},
		{Name: "rest", Percent: 100, By: policy.SplitRegion, ParallelRegions: 2}}}
	snap := policy.Policy{Name: "mixed", Spec: spec}.Snapshot(policy.KindConfig)
	agents := map[string]agent.Agent{}
	var cands []engine.Candidate
	add := func(id, region, zone string, canary bool) {
		attrs := map[string]string{"cloud.region": region, "cloud.availability_zone": zone}
		if canary {
			attrs["labels.canary"] = "true"
		}
		agents[id] = agent.Agent{ID: id, Attributes: attrs}
		cands = append(cands, engine.Candidate{AgentID: id, FromRef: "h0", Attributes: selector.Map(attrs)})
	}
	add("k1", "us-1", "us-1c", true)
	add("k2", "ap-1", "ap-1a", true)
	add("k3", "us-1", "us-1a", true)
	add("e1", "eu-1", "eu-1a", false)
	add("e2", "eu-1", "eu-1b", false)
	add("u1", "us-1", "us-1b", false)
	add("u2", "us-1", "us-1a", false)
	add("a1", "ap-1", "ap-1b", false)
	r, ts, err := engine.Create(engine.NewRollout{ID: "r-mixed", Fleet: "edge", Kind: policy.KindConfig, Policy: snap, ToRef: "h1",
		Origin: rollout.OriginGitOps, Candidates: cands, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	scopes := engine.PassScopes(r, ts, agents, nil)
	checked := 0
	for s, st := range r.Stages {
		req := engine.GateRequest(engine.Input{Rollout: r, Targets: ts, Agents: agents}, engine.GateDue{Stage: s, Pass: engine.StageGate})
		for p, gp := range req.Passes {
			sc := scopes[engine.PassKey{Stage: s, Pass: p}]
			if want := strings.Split(gp.Region, "|"); join(sc.Regions) != join(want) {
				t.Errorf("stage %s pass %s: regions %v, the gate queries %q", st.Name, gp.Name, sc.Regions, gp.Region)
			}
			if want := strings.Split(gp.Zone, "|"); join(sc.Zones) != join(want) {
				t.Errorf("stage %s pass %s: zones %v, the gate queries %q", st.Name, gp.Name, sc.Zones, gp.Zone)
			}
			checked++
		}
	}
	if canary := scopes[engine.PassKey{}]; join(canary.Regions) != "ap-1,us-1" || join(canary.Zones) != "ap-1a,us-1a,us-1c" {
		t.Errorf("canary scope %+v, want regions ap-1,us-1 and zones ap-1a,us-1a,us-1c", canary)
	}
	if checked != 5 { // canary, eu-1a, eu-1b, and rest/ap-1+us-1 with two passes
		t.Errorf("%d passes compared, want 5 (stages %s)", checked, stageNames(r))
	}
}

// A pass lists at most schema.MaxPassAgents agents, those of its first
// batches: the detail stays small for a rollout of 100,000 targets, and
// targets?stage= lists them all.
func TestNewRolloutDetail_PassAgentsAreBounded(t *testing.T) {
	n := schema.MaxPassAgents + 5
	r := rollout.Rollout{ID: "r-big", Status: rollout.Running, CreatedAt: t0, Waves: []rollout.Wave{{Name: "all", Status: rollout.WaveRunning}},
		Stages: []rollout.Stage{{Name: "all", Status: rollout.StageRunning, Passes: []rollout.Pass{{Name: "all", Size: n, BatchSize: 10, Batches: (n + 9) / 10}}}}}
	var ts []rollout.Target
	for i := n - 1; i >= 0; i-- { // stored by agent id, not in batch order
		ts = append(ts, rollout.Target{AgentID: fmt.Sprintf("a%03d", n-1-i), Status: rollout.TargetPending, Batch: i / 10})
	}
	slices.SortFunc(ts, func(a, b rollout.Target) int { return strings.Compare(a.AgentID, b.AgentID) })
	p := newRolloutDetail(r, ts, tokenTable(t)).Stages[0].Passes[0]
	if len(p.Agents) != schema.MaxPassAgents || p.Targets != n {
		t.Fatalf("%d agents of %d targets, want %d", len(p.Agents), p.Targets, schema.MaxPassAgents)
	}
	// a104 is in batch 0, a000 in batch 10: the first batches come first.
	if p.Agents[0] != "a095" || p.Agents[9] != "a104" || p.Agents[10] != "a085" || slices.Contains(p.Agents, "a000") {
		t.Errorf("agents %v, want batch 0 (a095..a104) first and batch 10 left out", p.Agents)
	}
}

// The document declares every field the placement added to the answers
// (the harness validates answers against it, but a field the document
// does not declare would pass unnoticed), and the stage filter.
func TestDocument_DeclaresThePlacement(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		schema string
		of     any
	}{
		{schema: "RolloutTarget", of: schema.Target{}},
		{schema: "StagePass", of: schema.StagePass{}},
		{schema: "RolloutStage", of: schema.Stage{}},
		{schema: "Problem", of: Problem{}},
	}
	for _, c := range cases {
		s := doc.Components.Schemas[c.schema]
		if s == nil {
			t.Fatalf("schema %s missing", c.schema)
		}
		rt := reflect.TypeOf(c.of)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if _, ok := s.Value.Properties[name]; !ok && name != "" && name != "-" {
				t.Errorf("%s.%s (%s.%s) is not in the document", c.schema, name, rt.Name(), rt.Field(i).Name)
			}
		}
	}
	op := doc.Paths.Find("/rollouts/{id}/targets").Get
	if op.Parameters.GetByInAndName("query", "stage") == nil {
		t.Errorf("listRolloutTargets does not document ?stage")
	}
}
