package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

func TestGetRollout_CarriesWhatTheRolloutPageNeeds(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	h.pass(id)          // starts the canary e1
	h.applyConfig("e1") // e1 reports the new configuration
	h.pass(id)          // e1 enters verifying: the health wait runs
	rep := h.do(get("/api/v1/rollouts/"+id, RoleViewer))
	wantOK(t, rep)
	v := decode[rolloutView](t, rep)
	if v.Origin != rollout.OriginGitOps || v.CreatedBy != "gitops" || v.CreatedByActor != "gitops" {
		t.Errorf("origin %q createdBy %q/%q, want gitops", v.Origin, v.CreatedBy, v.CreatedByActor)
	}
	if want := "Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17"; v.Policy.Source != want {
		t.Errorf("policy source %q, want %q", v.Policy.Source, want)
	}
	if v.Policy.HealthWait != "5m0s" || v.Policy.HealthWaitSeconds != 300 {
		t.Errorf("healthWait %q (%d s), want 5m0s (300 s)", v.Policy.HealthWait, v.Policy.HealthWaitSeconds)
	}
	if len(v.Waves) != 2 || *v.Waves[0].Total != 1 || *v.Waves[0].InHealthWait != 1 || v.Waves[0].Counts.Verifying != 1 {
		t.Fatalf("wave 0 should hold e1 in the health wait: %+v", v.Waves)
	}
	if *v.Waves[1].Total != 3 || v.Waves[1].Counts.Pending != 3 || *v.Waves[1].InHealthWait != 0 {
		t.Errorf("wave 1 should hold e2..e4 pending: %+v", v.Waves[1])
	}
	if v.TargetCounts == nil || v.TargetCounts.Pending != 3 || v.TargetCounts.Verifying != 1 {
		t.Errorf("target counts %+v, want 3 pending and 1 verifying", v.TargetCounts)
	}
	if v.StartedAt == nil || v.ToRef == "" {
		t.Errorf("startedAt %v toRef %q, want both set", v.StartedAt, v.ToRef)
	}
}

func TestGetRollout_BuiltInPolicySaysSoInsteadOfAPath(t *testing.T) {
	h := newHarness(t)
	r := seedVersionRollout(h, "v-1")
	r.Policy = policy.BuiltIn(policy.KindVersion)
	h.store.Rollouts[r.ID] = r
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/v-1", RoleViewer)))
	if want := "Policy default · healthWait 1m · built-in policy"; v.Policy.Source != want {
		t.Errorf("source %q, want %q", v.Policy.Source, want)
	}
}

func TestGetRollout_UIOriginShowsTheOperatorsNameAndReason(t *testing.T) {
	h := newHarness(t)
	r := seedVersionRollout(h, "v-1")
	r.Origin, r.CreatedBy, r.RequestReason = rollout.OriginUI, operator.Actor, "CVE fix"
	h.store.Rollouts[r.ID] = r
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/v-1", RoleViewer)))
	if v.CreatedBy != "Dana Operator" || v.CreatedByActor != operator.Actor || v.RequestReason != "CVE fix" || v.Origin != rollout.OriginUI {
		t.Errorf("createdBy %q (%q), reason %q, origin %q", v.CreatedBy, v.CreatedByActor, v.RequestReason, v.Origin)
	}
}

func TestGetRollout_AckedFailuresByWave(t *testing.T) {
	h := newHarness(t)
	r := seedVersionRollout(h, "v-1")
	r.AckedFailures = map[int][]string{0: {"e3#1"}}
	h.store.Rollouts[r.ID] = r
	v := decode[rolloutView](t, h.do(get("/api/v1/rollouts/v-1", RoleViewer)))
	if len(v.AckedFailures) != 1 || v.AckedFailures[0].Wave != 0 || v.AckedFailures[0].Attempts[0] != "e3#1" {
		t.Errorf("ackedFailures %+v, want wave 0: e3#1", v.AckedFailures)
	}
}

// The task token completes the execution's park and is never shown; the
// execution's ARN names it for the console (the rollout page links it).
func TestGetRollout_NeverShowsTheTaskToken_ShowsTheExecution(t *testing.T) {
	h := newHarness(t)
	r := seedVersionRollout(h, "v-1")
	arn := "arn:aws:states:eu-west-1:123456789012:execution:myriarch-rollout:v-1"
	r.TaskToken, r.ExecutionArn, r.Executions = "secret-token", arn, 2
	h.store.Rollouts[r.ID] = r
	rep := h.do(get("/api/v1/rollouts/v-1", RoleViewer))
	if strings.Contains(string(rep.body), "secret-token") {
		t.Errorf("the view shows the task token: %s", rep.body)
	}
	if v := decode[rolloutView](t, rep); v.ExecutionArn != arn {
		t.Errorf("executionArn %q, want %q", v.ExecutionArn, arn)
	}
	list := decode[struct{ Items []rolloutView }](t, h.do(get("/api/v1/rollouts", RoleViewer)))
	if len(list.Items) != 1 || list.Items[0].ExecutionArn != arn {
		t.Errorf("the list shows %+v", list.Items)
	}
}

func TestListRollouts_FiltersAndPages(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	for i, st := range []rollout.Status{rollout.Completed, rollout.Aborted, rollout.Running} {
		r := seedVersionRollout(h, "v-"+string(rune('a'+i)))
		r.Status, r.CreatedAt = st, t0.Add(time.Duration(i+1)*time.Minute)
		h.store.Rollouts[r.ID] = r
	}
	cases := []struct {
		query string
		want  []string
	}{
		{query: "", want: []string{"v-c", "v-b", "v-a", id}},                     // newest first, every fleet and kind
		{query: "?kind=config", want: []string{id}},                              // kind filter
		{query: "?fleet=edge&kind=version", want: []string{"v-c", "v-b", "v-a"}}, // fleet and kind
		{query: "?status=completed,aborted", want: []string{"v-b", "v-a"}},       // several statuses
		{query: "?fleet=nope", want: nil},                                        // an unknown fleet has no rollouts
	}
	for _, c := range cases {
		rep := h.do(get("/api/v1/rollouts"+c.query, RoleViewer))
		wantOK(t, rep)
		got := decode[page.Page[rolloutView]](t, rep)
		if ids(got.Items) != join(c.want) {
			t.Errorf("%q: %v, want %v", c.query, ids(got.Items), c.want)
		}
	}
	first := decode[page.Page[rolloutView]](t, h.do(get("/api/v1/rollouts?limit=3", RoleViewer)))
	if len(first.Items) != 3 || first.Next == "" {
		t.Fatalf("limit 3: %d items, next %q", len(first.Items), first.Next)
	}
	rest := decode[page.Page[rolloutView]](t, h.do(get("/api/v1/rollouts?limit=3&pageToken="+first.Next, RoleViewer)))
	if ids(rest.Items) != id || rest.Next != "" {
		t.Errorf("page 2: %v next %q, want [%s] and no next", ids(rest.Items), rest.Next, id)
	}
	if first.Items[0].TargetCounts != nil || first.Items[0].Waves[0].Counts != nil {
		t.Errorf("list items carry counts; only getRollout has them")
	}
}

func TestListRolloutTargets_ProgressWaveStatusAndPaging(t *testing.T) {
	h := newHarness(t)
	seedVersionRollout(h, "v-1")
	all := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/v-1/targets", RoleViewer)))
	if len(all.Items) != 3 {
		t.Fatalf("%d targets, want 3", len(all.Items))
	}
	byAgent := map[string]targetView{}
	for _, tv := range all.Items {
		byAgent[tv.AgentID] = tv
	}
	if p := byAgent["e1"].Progress; p == nil || p.Phase != progress.PhaseHealthWait || p.FollowUntil != nil {
		t.Errorf("e1 progress %+v, want health_wait without followUntil", p)
	}
	if byAgent["e1"].VerifiedAt == nil || !byAgent["e1"].VerifiedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("e1 verifiedAt %v, want %v", byAgent["e1"].VerifiedAt, t0.Add(time.Minute))
	}
	if p := byAgent["e2"].Progress; p == nil || p.Phase != progress.PhaseCancelled {
		t.Errorf("e2 (cancelled, stored phase installing) progress %+v, want normalized to cancelled", p)
	}
	if byAgent["e3"].Progress != nil || byAgent["e3"].FromRef != "0.161.0" || byAgent["e3"].ToRef != "0.162.0" {
		t.Errorf("e3 (pending) %+v, want no progress and the refs", byAgent["e3"])
	}
	cases := []struct {
		query string
		want  string
	}{
		{query: "?wave=0", want: "e1,e2"},                   // one wave
		{query: "?wave=1", want: "e3"},                      // the other
		{query: "?status=verifying,pending", want: "e1,e3"}, // the page's running work first
		{query: "?wave=0&status=pending", want: ""},         // both filters
		{query: "?wave=7", want: ""},                        // a wave the rollout lacks lists nothing
		{query: "?wave=early", want: "e1,e2"},               // a wave by its name
		{query: "?wave=rest&status=pending", want: "e3"},    // by name, with a status
		{query: "?wave=", want: "e1,e2,e3"},                 // empty: no filter, as for status
	}
	for _, c := range cases {
		got := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/v-1/targets"+c.query, RoleViewer)))
		if agents(got.Items) != c.want {
			t.Errorf("%q: %s, want %s", c.query, agents(got.Items), c.want)
		}
	}
	p1 := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/v-1/targets?limit=2", RoleViewer)))
	p2 := decode[page.Page[targetView]](t, h.do(get("/api/v1/rollouts/v-1/targets?limit=2&pageToken="+p1.Next, RoleViewer)))
	if agents(p1.Items) != "e1,e2" || agents(p2.Items) != "e3" || p2.Next != "" {
		t.Errorf("pages %s | %s (next %q)", agents(p1.Items), agents(p2.Items), p2.Next)
	}
}

// TestListRolloutTargets_UnknownWaveNameIs400: a name the rollout does not
// have lists its waves, rather than an empty page that would look like a
// wave without targets.
func TestListRolloutTargets_UnknownWaveNameIs400(t *testing.T) {
	h := newHarness(t)
	seedVersionRollout(h, "v-1")
	p := wantProblem(t, h.do(get("/api/v1/rollouts/v-1/targets?wave=canary", RoleViewer)), http.StatusBadRequest, CodeWaveNameUnknown)
	if want := `rollout v-1 has no wave named "canary"; its waves are 0 "early", 1 "rest"`; p.Detail != want || join(p.Waves) != "early,rest" {
		t.Errorf("detail %q, waves %v; want %q and [early rest]", p.Detail, p.Waves, want)
	}
	wantProblem(t, h.do(get("/api/v1/rollouts/r-404/targets?wave=canary", RoleViewer)), http.StatusNotFound, CodeRolloutNotFound)
}

func TestRolloutReads_MissingRolloutIs404(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/api/v1/rollouts/r-404", "/api/v1/rollouts/r-404/targets"} {
		wantProblem(t, h.do(get(path, RoleViewer)), http.StatusNotFound, CodeRolloutNotFound)
	}
}

// seedVersionRollout stores a running version rollout of fleet edge to
// 0.162.0: e1 verifying (wave 0), e2 cancelled with a stale progress (wave
// 0), e3 pending (wave 1).
func seedVersionRollout(h *harness, id string) rollout.Rollout {
	started, verified := t0, t0.Add(time.Minute)
	snap := policy.Policy{Name: "canary-then-all", Path: "policies/canary-then-all.yaml", Commit: "9f3c2a17",
		Spec: policy.Spec{HealthWait: 5 * time.Minute}}.Snapshot(policy.KindVersion)
	r := rollout.Rollout{ID: id, Fleet: "edge", Kind: policy.KindVersion, Status: rollout.Running, Policy: snap,
		ToRef: "0.162.0", Executor: "manual", Origin: rollout.OriginGitOps, CreatedAt: t0, StartedAt: &started,
		Waves: []rollout.Wave{{Index: 0, Name: "early", Percent: 50, Status: rollout.WaveRunning, StartedAt: &started},
			{Index: 1, Name: "rest", Percent: 100, Status: rollout.WavePending}}, Version: 1}
	stale := &progress.TargetProgress{Phase: progress.PhaseInstalling, Source: progress.SourceExecutor, ToVersion: "0.162.0", UpdatedAt: t0,
		Steps: []progress.Step{{Name: progress.PhaseOffered, Status: progress.StepDone}, {Name: progress.PhaseInstalling, Status: progress.StepRunning}}}
	follow := t0.Add(time.Hour)
	live := &progress.TargetProgress{Phase: progress.PhaseHealthWait, Source: progress.SourceExecutor, ToVersion: "0.162.0", UpdatedAt: verified,
		FromVersion: "0.161.0", Attempt: 1, FollowUntil: &follow,
		Steps: []progress.Step{{Name: progress.PhaseOffered, Status: progress.StepDone}, {Name: progress.PhaseHealthWait, Status: progress.StepRunning, StartedAt: &verified}}}
	h.store.Rollouts[id] = r
	h.store.Targets[id] = []rollout.Target{
		{RolloutID: id, AgentID: "e1", Wave: 0, Status: rollout.TargetVerifying, Attempt: 1, FromRef: "0.161.0", ToRef: "0.162.0", StartedAt: &started, VerifiedAt: &verified, Progress: live},
		{RolloutID: id, AgentID: "e2", Wave: 0, Status: rollout.TargetCancelled, Attempt: 1, FromRef: "0.161.0", ToRef: "0.162.0", StartedAt: &started, Progress: stale},
		{RolloutID: id, AgentID: "e3", Wave: 1, Status: rollout.TargetPending, Attempt: 1, FromRef: "0.161.0", ToRef: "0.162.0"},
	}
	return r
}

func ids(rs []rolloutView) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return join(out)
}

func agents(ts []targetView) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.AgentID)
	}
	return join(out)
}

func join(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

// A rollout whose waves split by zone shows its stages, the progress in
// stages and, in the detail, the batches done per pass.
func TestGetRollout_Stages(t *testing.T) {
	h := newHarness(t)
	seedStagedRollout(t, h, policy.KindConfig)
	rep := h.do(get("/api/v1/rollouts/r-zones", RoleViewer))
	wantOK(t, rep)
	v := decode[rolloutView](t, rep)
	if v.Progress != "0/2" || len(v.Stages) != 2 || v.Stages[0].Name != "all/eu-1a" || v.Stages[0].Status != rollout.StageRunning {
		t.Fatalf("progress %q stages %+v, want 0/2 with all/eu-1a running", v.Progress, v.Stages)
	}
	if v.Policy.Topology == nil || v.Policy.Topology.ZoneAttribute != "cloud.availability_zone" {
		t.Fatalf("policy topology %+v, want the zone attribute of the snapshot", v.Policy.Topology)
	}
	p := v.Stages[0].Passes[0]
	if p.Targets != 2 || p.Batches != 2 || p.BatchesDone == nil || *p.BatchesDone != 1 {
		t.Fatalf("pass %+v, want 2 targets in 2 batches, 1 done", p)
	}
}

// seedStagedRollout stores r-zones of fleet edge: one wave split by zone
// into all/eu-1a (two agents, batch #0 succeeded, running) and all/eu-1b
// (pending), so its progress is 0/2.
func seedStagedRollout(t *testing.T, h *harness, kind policy.Kind) {
	t.Helper()
	spec := policy.Spec{Waves: []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone, Bake: 10 * time.Minute, MaxUnavailable: policy.Amount{Value: 1}}}}
	snap := policy.Policy{Name: "zones", Spec: spec}.Snapshot(kind)
	var cands []engine.Candidate
	for i, z := range []string{"eu-1a", "eu-1a", "eu-1b"} {
		cands = append(cands, engine.Candidate{AgentID: fmt.Sprintf("z%d", i), FromRef: "h0",
			Attributes: selector.Map{"cloud.region": "eu-1", "cloud.availability_zone": z}})
	}
	r, ts, err := engine.Create(engine.NewRollout{ID: "r-zones", Fleet: "edge", Kind: kind, Policy: snap, ToRef: "h1",
		Origin: rollout.OriginGitOps, Candidates: cands, Now: h.clock()})
	if err != nil {
		t.Fatal(err)
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
}

// The list and the fleet's active rollouts show a staged rollout's
// progress, and none for a rollout without stages.
func TestListRollouts_Progress(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	seedStagedRollout(t, h, policy.KindVersion)
	list := decode[page.Page[rolloutView]](t, h.do(get("/api/v1/rollouts", RoleViewer)))
	got := map[string]string{}
	for _, r := range list.Items {
		got[r.ID] = r.Progress
	}
	if p, ok := got["r-zones"]; !ok || p != "0/2" {
		t.Errorf("list progress of r-zones %q (listed %v), want 0/2", p, ok)
	}
	if p := got[id]; p != "" {
		t.Errorf("list progress of the unstaged %s %q, want none", id, p)
	}
	f := decode[schema.Fleet](t, h.do(get("/api/v1/fleets/edge", RoleViewer)))
	active := map[string]string{}
	for _, r := range f.ActiveRollouts {
		active[r.ID] = r.Progress
	}
	if p, ok := active["r-zones"]; !ok || p != "0/2" {
		t.Errorf("active rollouts %+v, want r-zones with progress 0/2", f.ActiveRollouts)
	}
	if p := active[id]; p != "" {
		t.Errorf("active rollout %s progress %q, want none", id, p)
	}
}
