package predict

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// t0 is a Monday, noon UTC (no daylight saving time in Berlin or New York).
var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fixed is an apply time without spread: the pessimistic run equals the median one.
func fixed(d time.Duration) ApplyTime {
	return ApplyTime{Median: d, P90: d, Source: SourceDefault}
}

func parsePolicy(t testing.TB, yaml string) policy.Policy {
	t.Helper()
	p, issues := policy.Parse([]byte("apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: p}\nspec:\n" + yaml))
	if issues.HasErrors() {
		t.Fatalf("policy: %v", issues)
	}
	return p
}

// edgeAgents are n online, healthy agents of fleet edge on configuration
// h1; attrs gives each its attributes.
func edgeAgents(n int, attrs func(i int) map[string]string) []agent.Agent {
	out := make([]agent.Agent, n)
	for i := range out {
		out[i] = agent.Agent{ID: fmt.Sprintf("a%03d", i), Fleet: "edge", Online: true, LastSeen: t0, DesiredHash: "h1",
			ServiceVersion: "0.161.0", Attributes: map[string]string{"host.name": fmt.Sprintf("host-%03d", i)},
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: t0.Add(-time.Hour)},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "h1", Status: agent.ConfigApplied, Since: t0.Add(-time.Hour)}}
		if attrs != nil {
			for k, v := range attrs(i) {
				out[i].Attributes[k] = v
			}
		}
	}
	return out
}

// edgeInput is the planner's input of a configuration change of fleet
// edge (h1 → h2) with the policy spec and the agents.
func edgeInput(t testing.TB, spec string, as []agent.Agent) planner.Input {
	t.Helper()
	f := &fleet.Fleet{Name: "edge", Config: fleet.Config{Hash: "h2"}, Rollout: fleet.RolloutPolicies{ConfigPolicy: "p"}}
	return planner.Input{FleetName: "edge", Fleet: f, Kind: policy.KindConfig, Commit: "c2",
		Policies: map[string]policy.Policy{"p": parsePolicy(t, spec)}, Agents: as, NewRolloutID: "plan", Now: t0}
}

// planOf plans the change of edgeInput. Its pessimistic finish counts the
// apply times alone, without the time evaluations take, so that the tests
// pin the course the engine and the state machine's cadence give
// (TestPlan_PessimisticCountsEvaluations pins that time).
func planOf(t testing.TB, spec string, as []agent.Agent, apply ApplyTime) Plan {
	t.Helper()
	return Planned(PlanInput{Apply: apply, Planner: edgeInput(t, spec, as), Evaluation: -1})
}

// plannerDecision is the rollout the planner creates for edgeInput.
func plannerDecision(t testing.TB, spec string, as []agent.Agent) planner.Decision {
	t.Helper()
	d := planner.Decide(edgeInput(t, spec, as))
	if d.Created == nil {
		t.Fatalf("no rollout: %s", d.Note)
	}
	return d
}

func at(d time.Duration) *When { w := At(t0.Add(d)); return &w }

func after(w int, d time.Duration) *When { v := AfterApproval(w, d); return &v }

func whenString(w *When) string {
	if w == nil {
		return "-"
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// wantWaves compares the waves' sizes, starts and ends.
func wantWaves(t *testing.T, p Plan, want []WavePlan) {
	t.Helper()
	if len(p.Waves) != len(want) {
		t.Fatalf("waves %+v, want %d", p.Waves, len(want))
	}
	for i, w := range want {
		got := p.Waves[i]
		if got.Size != w.Size || whenString(got.Start) != whenString(w.Start) || whenString(got.End) != whenString(w.End) {
			t.Errorf("wave %d %s: size %d, %s → %s; want size %d, %s → %s", i, got.Name, got.Size, whenString(got.Start), whenString(got.End),
				w.Size, whenString(w.Start), whenString(w.End))
		}
	}
}

func wantFinish(t *testing.T, p Plan, finish, pessimistic *When) {
	t.Helper()
	pr := p.Prediction
	if pr == nil || !p.Planned {
		t.Fatalf("no prediction (planned %v): %s", p.Planned, p.Note)
	}
	if !pr.Complete || whenString(pr.Finish) != whenString(finish) || whenString(pr.FinishPessimistic) != whenString(pessimistic) {
		t.Fatalf("finish %s, pessimistic %s (complete %v: %s); want %s, %s", whenString(pr.Finish), whenString(pr.FinishPessimistic),
			pr.Complete, pr.Reason, whenString(finish), whenString(pessimistic))
	}
}

// The pessimistic finish gives every evaluation of the rollout its time:
// what a pass decides takes effect that long after the pass is due, so
// that the delays add up along the rollout as the real ones do (unevenly:
// a delay that pushes a report past the state machine's wake-up costs a
// wake-up more), and the tolerance says how much later than the finish it
// is. 4 rounds of 90s.
func TestPlan_PessimisticCountsEvaluations(t *testing.T) {
	spec := "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 5\n  healthWait: 60s\n"
	plan := func(eval time.Duration) Plan {
		return Planned(PlanInput{Apply: fixed(30 * time.Second), Planner: edgeInput(t, spec, edgeAgents(20, nil)), Evaluation: eval})
	}
	cases := []struct {
		name        string
		eval        time.Duration
		pessimistic time.Duration // after t0
		later       float64
		evaluations int
	}{
		{name: "none", eval: -1, pessimistic: 6 * time.Minute, later: 0, evaluations: 25},
		{name: "the default, 0.25s", eval: 0, pessimistic: 6*time.Minute + 4250*time.Millisecond, later: 4.25, evaluations: 29}, // reports after the wake-ups: 4 passes more
		{name: "1s", eval: time.Second, pessimistic: 6*time.Minute + 9*time.Second, later: 9, evaluations: 29},
	}
	for _, c := range cases {
		p := plan(c.eval)
		wantFinish(t, p, at(6*time.Minute), at(c.pessimistic))
		if tol := p.Prediction.Tolerance; tol == nil || tol.LaterSeconds != c.later || tol.Evaluations != c.evaluations {
			t.Errorf("%s: tolerance %+v, want %gs later over %d evaluations", c.name, tol, c.later, c.evaluations)
		}
	}
	// More time per evaluation never moves the bound earlier, and it is
	// at least one evaluation later than the finish.
	prev := time.Duration(0)
	for eval := 10 * time.Millisecond; eval <= 3*time.Second; eval += 170 * time.Millisecond {
		p := plan(eval)
		got := p.Prediction.FinishPessimistic.At.Sub(*p.Prediction.Finish.At)
		if got < prev || got < eval {
			t.Errorf("evaluation %s: pessimistic %s after the finish, want at least %s and %s", eval, got, eval, prev)
		}
		prev = got
	}
}

// The pessimistic run completes whenever the median one does: a pass that
// takes its time sees the reports due meanwhile, so that none is left
// behind the clock (which ended the run as if nothing more would happen:
// 9 agents at once, a health wait of 1s, the default apply time).
func TestPlan_PessimisticCompletesAsTheMedianDoes(t *testing.T) {
	for _, wait := range []string{"1s", "2s", "10s", "90s"} {
		for _, n := range []int{1, 9} {
			spec := "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 0\n  healthWait: " + wait + "\n"
			p := Planned(PlanInput{Apply: ApplyTimes(policy.KindConfig, nil), Planner: edgeInput(t, spec, edgeAgents(n, nil))})
			pr := p.Prediction
			if pr == nil || !pr.Complete || pr.Finish == nil || pr.FinishPessimistic == nil || pr.Tolerance == nil {
				t.Fatalf("healthWait %s, %d agents: prediction %+v, want a finish, a pessimistic one and the tolerance", wait, n, pr)
			}
			if !pr.FinishPessimistic.At.After(*pr.Finish.At) {
				t.Errorf("healthWait %s, %d agents: pessimistic %s not after the finish %s", wait, n, whenString(pr.FinishPessimistic), whenString(pr.Finish))
			}
		}
	}
}

// After an approval the pessimistic offsets round up, so that the bound
// does not come before the moment by a fraction of a second.
func TestPlan_PessimisticOffsetsRoundUp(t *testing.T) {
	if w := atLatest(1, 360250*time.Millisecond); *w.OffsetSeconds != 361 {
		t.Errorf("atLatest(360.25s) = %ds, want 361", *w.OffsetSeconds)
	}
	if w := AfterApproval(1, 360250*time.Millisecond); *w.OffsetSeconds != 360 {
		t.Errorf("AfterApproval(360.25s) = %ds, want 360 (rounded)", *w.OffsetSeconds)
	}
}

// 20 agents, maxConcurrent 5, apply 30s, healthWait 60s: 4 rounds of 90s.
func TestPlan_MaxConcurrent_FourRounds(t *testing.T) {
	p := planOf(t, "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 5\n  healthWait: 60s\n", edgeAgents(20, nil), fixed(30*time.Second))
	wantWaves(t, p, []WavePlan{{Size: 20, Start: at(0), End: at(6 * time.Minute)}})
	wantFinish(t, p, at(6*time.Minute), at(6*time.Minute))
	if p.Relevant != 20 || p.Targets != 20 || p.ExcludedCount != 0 || p.ToRef != "h2" || p.Policy.Name != "p" {
		t.Errorf("plan %+v", p)
	}
}

// Agents in Berlin and New York, a window 22:00–05:00 in each agent's zone:
// the Berlin wave starts at 21:00 UTC, the New York one at 03:00 UTC the
// next day.
func TestPlan_WindowsInTwoZones(t *testing.T) {
	as := edgeAgents(4, func(i int) map[string]string {
		if i < 2 {
			return map[string]string{"site.timezone": "Europe/Berlin"}
		}
		return map[string]string{"site.timezone": "America/New_York"}
	})
	spec := `  waves:
    - {name: berlin, selector: "site.timezone=Europe/Berlin"}
    - {name: rest, percent: 100}
  maxConcurrent: 0
  healthWait: 60s
  maintenanceWindows: [{start: "22:00", end: "05:00"}]
`
	p := planOf(t, spec, as, fixed(20*time.Second))
	berlin, newYork := 9*time.Hour, 15*time.Hour // 21:00 UTC, 03:00 UTC on Tuesday
	wantWaves(t, p, []WavePlan{
		{Size: 2, Start: at(berlin), End: at(berlin + 80*time.Second)},
		{Size: 2, Start: at(newYork), End: at(newYork + 80*time.Second)},
	})
	wantFinish(t, p, at(newYork+80*time.Second), at(newYork+80*time.Second))
	if !strings.Contains(strings.Join(p.Prediction.Assumptions, "\n"), "percent wave is drawn") {
		t.Errorf("assumptions %q do not say that percent waves are drawn", p.Prediction.Assumptions)
	}
}

// A canary, then the rest after an approval: the moments after it are
// offsets from the approval.
func TestPlan_Approval_LaterTimesAreOffsets(t *testing.T) {
	as := edgeAgents(6, func(i int) map[string]string {
		if i == 0 {
			return map[string]string{"labels.wave": "canary"}
		}
		return nil
	})
	spec := `  waves:
    - {name: canary, selector: {matchAttributes: {labels.wave: canary}}}
    - {name: rest, percent: 100, requireApproval: true}
  maxConcurrent: 0
  healthWait: 5m
`
	p := planOf(t, spec, as, ApplyTime{Median: 20 * time.Second, P90: time.Minute, Source: SourceHistory, Samples: 9})
	canaryEnd := 5*time.Minute + 20*time.Second
	wantWaves(t, p, []WavePlan{
		{Size: 1, Start: at(0), End: at(canaryEnd)},
		{Size: 5, Start: after(1, 0), End: after(1, canaryEnd)},
	})
	// the pessimistic run asks for the approval later; its finish counts from its own approval
	wantFinish(t, p, after(1, canaryEnd), after(1, 6*time.Minute))
	ap := p.Prediction.Approvals
	if len(ap) != 1 || ap[0].Wave != 1 || ap[0].Name != "rest" || whenString(&ap[0].RequestedAt) != whenString(at(canaryEnd)) {
		t.Errorf("approvals %+v, want wave 1 asked at %s", ap, t0.Add(canaryEnd))
	}
}

// Two approvals: the second counts from the first, the finish from the second.
func TestPlan_TwoApprovals_OffsetsFromTheLatest(t *testing.T) {
	as := edgeAgents(3, func(i int) map[string]string { return map[string]string{"labels.wave": fmt.Sprint(i)} })
	spec := `  waves:
    - {name: w0, selector: {matchAttributes: {labels.wave: "0"}}}
    - {name: w1, selector: {matchAttributes: {labels.wave: "1"}}, requireApproval: true}
    - {name: w2, percent: 100, requireApproval: true}
  maxConcurrent: 0
  healthWait: 40s
  approvals: {required: 2}
`
	p := planOf(t, spec, as, fixed(20*time.Second))
	ap := p.Prediction.Approvals
	if len(ap) != 2 || whenString(&ap[0].RequestedAt) != whenString(at(time.Minute)) || whenString(&ap[1].RequestedAt) != whenString(after(1, time.Minute)) {
		t.Fatalf("approvals %+v", ap)
	}
	wantFinish(t, p, after(2, time.Minute), after(2, time.Minute))
}

// Stages by zone with a bake of 10m: each stage is 80s of work and 10m of
// bake, the next starts when the bake ends.
func TestPlan_StagesWithBakes(t *testing.T) {
	as := edgeAgents(4, func(i int) map[string]string {
		return map[string]string{"cloud.region": "eu-1", "cloud.availability_zone": []string{"eu-1a", "eu-1b"}[i%2]}
	})
	spec := `  waves:
    - {name: all, percent: 100, by: zone, bake: 10m}
  maxConcurrent: 0
  maxUnavailable: 100%
  healthWait: 60s
`
	p := planOf(t, spec, as, fixed(20*time.Second))
	stage := 80*time.Second + 10*time.Minute
	if len(p.Stages) != 2 {
		t.Fatalf("stages %+v, want one per zone", p.Stages)
	}
	for i, st := range p.Stages {
		start, end := at(time.Duration(i)*stage), at(time.Duration(i+1)*stage)
		if st.Size != 2 || whenString(st.Start) != whenString(start) || whenString(st.End) != whenString(end) {
			t.Errorf("stage %s: size %d, %s → %s; want 2, %s → %s", st.Name, st.Size, whenString(st.Start), whenString(st.End), whenString(start), whenString(end))
		}
	}
	wantFinish(t, p, at(2*stage), at(2*stage))
}

// With a health gate, every reading is green and the bake runs its course.
func TestPlan_GateAssumedGreen(t *testing.T) {
	spec := `  waves: [{name: all, percent: 100, bake: 2m}]
  maxConcurrent: 0
  healthWait: 60s
  health:
    interval: 30s
    probes: [{url: "http://{host}:13133/"}]
`
	p := planOf(t, spec, edgeAgents(3, nil), fixed(20*time.Second))
	wantFinish(t, p, at(80*time.Second+2*time.Minute), at(80*time.Second+2*time.Minute))
	if !strings.Contains(strings.Join(p.Prediction.Assumptions, "\n"), "health gates is green") {
		t.Errorf("assumptions %q do not name the gates", p.Prediction.Assumptions)
	}
}

// The apply time from history: the median for the finish, the 90th
// percentile for the pessimistic one.
func TestPlan_HistoryApplyTime(t *testing.T) {
	var samples []time.Duration
	for _, s := range []int{3, 5, 4, 9, 4, 6, 30, 5, 4, 5} { // sorted: 3 4 4 4 5 5 5 6 9 30
		samples = append(samples, time.Duration(s)*time.Second)
	}
	apply := ApplyTimes(policy.KindConfig, samples)
	if apply.Median != 5*time.Second || apply.P90 != 9*time.Second || apply.Source != SourceHistory || apply.Samples != 10 {
		t.Fatalf("apply times %+v, want median 5s and p90 9s from 10 samples", apply)
	}
	p := planOf(t, "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 2\n  healthWait: 30s\n", edgeAgents(4, nil), apply)
	wantFinish(t, p, at(2*35*time.Second), at(2*39*time.Second))
	if a := p.Prediction.ApplySeconds; a.Median != 5 || a.P90 != 9 || a.Source != SourceHistory || a.Samples != 10 {
		t.Errorf("applySeconds %+v", a)
	}
}

func TestApplyTimes_Boundaries(t *testing.T) {
	four := []time.Duration{time.Second, time.Second, time.Second, time.Second}
	for _, c := range []struct {
		name          string
		kind          policy.Kind
		samples       []time.Duration
		median, p90   time.Duration
		source        string
		wantedSamples int
	}{
		{name: "none, config", kind: policy.KindConfig, median: 20 * time.Second, p90: 40 * time.Second, source: SourceDefault},
		{name: "none, version", kind: policy.KindVersion, median: 2 * time.Minute, p90: 4 * time.Minute, source: SourceDefault},
		{name: "one below the minimum", kind: policy.KindConfig, samples: four, median: 20 * time.Second, p90: 40 * time.Second, source: SourceDefault, wantedSamples: 4},
		{name: "exactly the minimum", kind: policy.KindConfig, samples: append(four, 6*time.Second), median: time.Second, p90: 6 * time.Second, source: SourceHistory, wantedSamples: 5},
	} {
		got := ApplyTimes(c.kind, c.samples)
		if got.Median != c.median || got.P90 != c.p90 || got.Source != c.source || got.Samples != c.wantedSamples {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// Nothing relevant: no rollout, a note, still a plan.
func TestPlan_NothingRelevant(t *testing.T) {
	as := edgeAgents(2, nil)
	for i := range as {
		as[i].DesiredHash = "h2"
	}
	p := planOf(t, "  waves: [{name: all, percent: 100}]\n", as, fixed(time.Second))
	if p.Planned || p.Prediction != nil || p.Note == "" || p.Relevant != 0 || p.Policy.Name != "p" {
		t.Fatalf("plan %+v, want not planned with a note", p)
	}
}

// Agents the planner keeps out are listed with the reason; an offline
// agent is skipped after the grace period, and the wave waits for it.
func TestPlan_ExcludedAndOffline(t *testing.T) {
	as := edgeAgents(3, nil)
	as[2].Online = false
	in := edgeInput(t, "  waves: [{name: all, percent: 100}]\n  offlineGracePeriod: 15m\n", as)
	failed := rollout.Target{RolloutID: "r-old", AgentID: "a001", Status: rollout.TargetFailed, ToRef: "h2"}
	in.LastTargets = map[string]planner.LastTarget{"a001": {Target: failed, RolloutStatus: rollout.Paused}}
	p := Planned(PlanInput{Apply: fixed(20 * time.Second), Planner: in, Evaluation: -1})
	if p.Relevant != 3 || p.Targets != 2 || p.ExcludedCount != 1 || len(p.Excluded) != 1 {
		t.Fatalf("plan %+v, want 3 relevant, 1 excluded", p)
	}
	if e := p.Excluded[0]; e.AgentID != "a001" || e.DisplayName != "host-001" || e.Code != planner.ExcludedFailed || !strings.Contains(e.Reason, "r-old") {
		t.Errorf("excluded %+v", e)
	}
	wantFinish(t, p, at(15*time.Minute), at(15*time.Minute))
	if !strings.Contains(strings.Join(p.Prediction.Assumptions, "\n"), "1 agent(s) offline") {
		t.Errorf("assumptions %q do not count the offline agent", p.Prediction.Assumptions)
	}
}

// A running rollout: halfway through, the rest is predicted from its
// state, and the targets in flight finish first.
func TestLive_HalfwayThrough(t *testing.T) {
	as := edgeAgents(10, nil)
	d := plannerDecision(t, "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 5\n  healthWait: 60s\n", as)
	r, ts := d.Created.Rollout, d.Created.Targets
	// the first five started at t0 and reported at t0+10s; it is t0+40s
	started, verified := t0, t0.Add(10*time.Second)
	agents := map[string]agent.Agent{}
	for _, a := range as {
		agents[a.ID] = a
	}
	r.Status, r.StartedAt = rollout.Running, &started
	r.Waves[0].Status, r.Waves[0].StartedAt = rollout.WaveRunning, &started
	for i := range ts[:5] {
		ts[i].Status, ts[i].StartedAt, ts[i].VerifiedAt, ts[i].ReportedAt = rollout.TargetVerifying, &started, &verified, &verified
		a := agents[ts[i].AgentID]
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h2", Status: agent.ConfigApplied, Since: verified}
		agents[a.ID] = a
	}
	pred := Live(LiveInput{Rollout: r, Targets: ts, Agents: agents, Now: t0.Add(40 * time.Second), Apply: ApplyTimes(policy.KindConfig, Samples(ts))})
	// samples: 5 of 10s; the first five succeed at t0+70s, the next at +80s +60s
	if pred == nil || !pred.Complete || whenString(pred.Finish) != whenString(at(140*time.Second)) || whenString(pred.Start) != whenString(at(0)) {
		t.Fatalf("prediction %+v, want finish at t0+140s", pred)
	}
	if pred.ApplySeconds.Source != SourceHistory || pred.ApplySeconds.Median != 10 {
		t.Errorf("applySeconds %+v, want the rollout's own 10s", pred.ApplySeconds)
	}
	if len(pred.Waves) != 1 || whenString(pred.Waves[0].End) != whenString(at(140*time.Second)) {
		t.Errorf("waves %+v", pred.Waves)
	}
	if done := Live(LiveInput{Rollout: rollout.Rollout{Status: rollout.Completed}}); done != nil {
		t.Errorf("a completed rollout has a prediction: %+v", done)
	}
}

// Nothing of a paused or a failed rollout progresses until a person acts:
// no finish, and the reason says why.
func TestLive_StalledHasNoFinish(t *testing.T) {
	as := edgeAgents(2, nil)
	d := plannerDecision(t, "  waves: [{name: all, percent: 100}]\n  healthWait: 60s\n", as)
	agents := map[string]agent.Agent{as[0].ID: as[0], as[1].ID: as[1]}
	for status, why := range map[rollout.Status]string{
		rollout.Paused: "the rollout is paused: no target starts until it is resumed",
		rollout.Failed: "the rollout failed: no target starts until a person retries its failed targets, rolls it back or aborts it",
	} {
		r := d.Created.Rollout
		r.Status = status
		pred := Live(LiveInput{Rollout: r, Targets: d.Created.Targets, Agents: agents, Now: t0.Add(time.Hour), Apply: fixed(20 * time.Second)})
		switch {
		case pred == nil:
			t.Errorf("%s: no prediction, want one that says why it has no finish", status)
		case pred.Complete || pred.Finish != nil || pred.FinishPessimistic != nil:
			t.Errorf("%s: prediction %+v has a finish", status, pred)
		case pred.Reason != why:
			t.Errorf("%s: reason %q, want %q", status, pred.Reason, why)
		case pred.Start == nil || pred.ApplySeconds.Median != 20:
			t.Errorf("%s: start %v, applySeconds %+v", status, pred.Start, pred.ApplySeconds)
		}
	}
	for _, status := range []rollout.Status{rollout.Completed, rollout.RollingBack, rollout.Aborted} {
		if pred := Live(LiveInput{Rollout: rollout.Rollout{Status: status}}); pred != nil {
			t.Errorf("%s: prediction %+v, want none", status, pred)
		}
	}
}

// The feed (feed.go) changes no decision: the course of a run over the
// feed is the course over every target, for policies that exercise what
// it leaves out: windows in several zones, batches of stages, offline and
// departed agents, waves that follow each other in one pass.
func TestFeed_SameCourseAsEveryTarget(t *testing.T) {
	zones := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo"}
	as := edgeAgents(60, func(i int) map[string]string {
		return map[string]string{"site.timezone": zones[i%3], "cloud.region": "eu-1",
			"cloud.availability_zone": []string{"eu-1a", "eu-1b"}[i%2], "labels.wave": fmt.Sprint(i % 4)}
	})
	as[7].Online, as[13].Online = false, false
	as[21].Fleet = "elsewhere"
	specs := map[string]string{
		"windows": `  waves: [{name: w0, selector: {matchAttributes: {labels.wave: "0"}}}, {name: rest, percent: 100}]
  maxConcurrent: 4
  maintenanceWindows: [{start: "22:00", end: "05:00"}, {days: [Tue], start: "13:00", end: "14:00", timezone: UTC}]
`,
		"batches": `  waves: [{name: zones, percent: 50, by: zone, maxUnavailable: 3}, {name: rest, percent: 100, by: zone, bake: 5m}]
  maxConcurrent: 2
  healthWait: 45s
`,
		"one pass": `  waves: [{name: a, percent: 10}, {name: b, percent: 20}, {name: c, percent: 100}]
  maxConcurrent: 7
  offlineGracePeriod: 10m
`,
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			d := plannerDecision(t, spec, as)
			agents := map[string]agent.Agent{}
			for _, a := range as {
				agents[a.ID] = a
			}
			fed := newRun(d.Created.Rollout, d.Created.Targets, agents, t0, "", 25*time.Second)
			if !fed.feed.on {
				t.Fatal("the feed does not serve")
			}
			every := newRun(d.Created.Rollout, d.Created.Targets, agents, t0, "", 25*time.Second)
			every.feed = &feed{}
			a, b := fed.simulate(), every.simulate()
			if !a.complete || !b.complete {
				t.Fatalf("incomplete: %s / %s", a.reason, b.reason)
			}
			if got, want := traceString(a), traceString(b); got != want {
				t.Errorf("over the feed:\n%s\nover every target:\n%s", got, want)
			}
			if a.steps > b.steps {
				t.Errorf("%d steps over the feed, %d over every target", a.steps, b.steps)
			}
		})
	}
}

func traceString(tr trace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "start %s finish %s\n", whenString(tr.start), whenString(tr.finish))
	for i, w := range tr.waves {
		fmt.Fprintf(&b, "wave %d %s %s %s\n", i, whenString(w.began), whenString(w.first), whenString(w.end))
	}
	for i, s := range tr.stages {
		fmt.Fprintf(&b, "stage %d %s %s %s\n", i, whenString(s.began), whenString(s.first), whenString(s.end))
	}
	return b.String()
}

// A health wait shorter than the state machine's ApplyCap ends at its
// deadline: the agent's report wakes only the agent-event pass, which
// verifies the target, but while targets apply the state machine sleeps
// no longer than the health wait, so its next pass learns the wait's end
// before it comes. 9 agents 3 at a time, apply 1s, healthWait 2s: rounds
// of 3s, not of the 10s cap.
func TestPlan_ShortHealthWait_StateMachineCadence(t *testing.T) {
	p := planOf(t, "  waves: [{name: all, percent: 100}]\n  maxConcurrent: 3\n  healthWait: 2s\n", edgeAgents(9, nil), fixed(time.Second))
	wantFinish(t, p, at(9*time.Second), at(9*time.Second))
}

// A target in progress whose agent applied the change and is restarting
// (unhealthy, no status yet) is assumed to come up healthy: the prediction
// does not let its start-up limit pass and fail the rollout.
func TestLive_AppliedAndRestarting(t *testing.T) {
	as := edgeAgents(2, nil)
	d := plannerDecision(t, "  waves: [{name: all, percent: 100}]\n  healthWait: 60s\n  failureThreshold: {maxFailed: 0}\n", as)
	r, ts := d.Created.Rollout, d.Created.Targets
	started, applied := t0, t0.Add(10*time.Second)
	r.Status, r.StartedAt = rollout.Running, &started
	r.Waves[0].Status, r.Waves[0].StartedAt = rollout.WaveRunning, &started
	agents := map[string]agent.Agent{}
	for i, a := range as {
		ts[i].Status, ts[i].StartedAt = rollout.TargetInProgress, &started
		a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h2", Status: agent.ConfigApplied, Since: applied}
		a.Health = agent.Health{Healthy: false, StartTime: applied, ReportedAt: applied}
		agents[a.ID] = a
	}
	pred := Live(LiveInput{Rollout: r, Targets: ts, Agents: agents, Now: t0.Add(12 * time.Second), Apply: fixed(10 * time.Second)})
	if pred == nil || !pred.Complete {
		t.Fatalf("prediction %+v, want a complete one", pred)
	}
}
