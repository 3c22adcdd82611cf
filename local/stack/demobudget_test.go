package stack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/predict"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// The budget of make demo: its first rollout completed within 90 s of the
// command's start, and the whole demo within 3 minutes. Of those, the
// rollouts' own course (the demo's waits, the simulated collectors' work at
// the demo's speed, the engine's passes) may take demoFirstBudget and
// demoAllBudget as core/predict predicts it. The rest, 70 s and 95 s, is
// what the machine adds: the build on a fresh clone (about 30 s on two
// cores), the start of DynamoDB Local, Prometheus and the stack (about
// 8 s), the 50 agents' connections and the bootstrap (about 7 s), and a
// second or two of latency at each of the demo's fourteen waves and stages.
const (
	demoFirstBudget = 20 * time.Second
	demoAllBudget   = 85 * time.Second
)

// TestDemo_RolloutsFitTheBudget predicts the demo's four rollouts with the
// demo's timings, as the engine runs them on a virtual clock: counted, not
// timed, so that a longer wait fails on any machine.
func TestDemo_RolloutsFitTheBudget(t *testing.T) {
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if files, err = withDemoTimings(files, DemoOptions{}.timings()); err != nil {
		t.Fatal(err)
	}
	d := simfleet.DefaultConfig().Delays
	config, update := fixedApply(d.SlowestConfig()/DemoSpeed), fixedApply(d.SlowestUpdate()/DemoSpeed)
	zones := strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: demo-zones", 1)

	first := predictedDuration(t, planOfDemo(t, files, nil, policy.KindConfig, config))
	version := predictedDuration(t, planOfDemo(t, files, map[string]string{"fleets/edge.yaml": strings.Replace(
		string(files["fleets/edge.yaml"]), "version: 0.161.0", "version: 0.162.0", 1)}, policy.KindVersion, update))
	zonesPlan := planOfDemo(t, files, map[string]string{"fleets/edge.yaml": zones}, policy.KindConfig, config)
	green := predictedDuration(t, zonesPlan)
	red := redStageEnd(t, zonesPlan, demoFailZone) + config.Median // the red stage's bake, then its rollback
	all := first + version + green + red
	t.Logf("predicted: configuration %s, version %s, by zone %s, red gate %s; %s in all", first, version, green, red.Round(100*time.Millisecond), all.Round(100*time.Millisecond))
	if first > demoFirstBudget {
		t.Errorf("the demo's first rollout takes %s, over its budget of %s: make demo would show it later than 90 s after its start", first, demoFirstBudget)
	}
	if all > demoAllBudget {
		t.Errorf("the demo's rollouts take %s, over their budget of %s: make demo would take longer than 3 minutes", all, demoAllBudget)
	}
}

// fixedApply is an apply time without spread.
func fixedApply(d time.Duration) predict.ApplyTime {
	return predict.ApplyTime{Median: d, P90: d, Source: predict.SourceDefault}
}

// demoT0 is the virtual clock's start: any moment, since the demo
// policies have no maintenance windows.
var demoT0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// planOfDemo plans a rollout of fleet edge from the demo's revision with
// the changed files: the simulated fleet, every collector on the
// quickstart's version and on a configuration before the change.
func planOfDemo(t *testing.T, files map[string][]byte, changed map[string]string, k policy.Kind, apply predict.ApplyTime) predict.Plan {
	t.Helper()
	all := map[string][]byte{}
	for p, b := range files {
		all[p] = b
	}
	for p, b := range changed {
		all[p] = []byte(b)
	}
	rev, issues := revision.Load(all, "budget")
	if issues.HasErrors() {
		t.Fatalf("the demo's revision: %v", issues)
	}
	f, ok := rev.Fleet("edge")
	if !ok {
		t.Fatal("the demo's revision has no fleet edge")
	}
	pols := map[string]policy.Policy{}
	for _, p := range rev.Policies {
		pols[p.Name] = p
	}
	p := predict.Planned(predict.PlanInput{Apply: apply, Planner: planner.Input{FleetName: "edge", Fleet: &f, Kind: k, Commit: rev.Commit,
		Policies: pols, Agents: demoAgents(), NewRolloutID: "plan", Now: demoT0}})
	if !p.Planned || p.Prediction == nil || !p.Prediction.Complete {
		t.Fatalf("no prediction of the demo's %s rollout: %s %+v", k, p.Note, p.Prediction)
	}
	return p
}

// demoAgents are the demo's simulated collectors as the gateway records
// them: simfleet.DefaultConfig's fleet label, canaries and version, in
// DemoZones round robin.
func demoAgents() []agent.Agent {
	cfg := simfleet.DefaultConfig()
	out := make([]agent.Agent, cfg.N)
	for i := range out {
		n := i + 1
		region, zone, _ := strings.Cut(DemoZones[i%len(DemoZones)], "/")
		attrs := map[string]string{"host.name": simfleet.HostName(n), "service.name": cfg.ServiceName, "service.version": cfg.StartVersion,
			"labels.fleet": cfg.Fleet, "cloud.region": region, "cloud.availability_zone": zone}
		if n <= cfg.CanaryCount {
			attrs["labels.wave"] = "canary"
		}
		out[i] = agent.Agent{ID: fmt.Sprintf("agent-%02d", n), Fleet: cfg.Fleet, Attributes: attrs, Online: true, LastSeen: demoT0,
			ServiceVersion: cfg.StartVersion, DesiredHash: "bootstrapped",
			Health:       agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: demoT0.Add(-time.Minute)},
			RemoteConfig: agent.RemoteConfigStatus{Hash: "bootstrapped", Status: agent.ConfigApplied, Since: demoT0.Add(-time.Minute)}}
	}
	return out
}

// predictedDuration is the plan's predicted course from its start to its
// finish, every approval given the moment it is asked for.
func predictedDuration(t *testing.T, p predict.Plan) time.Duration {
	t.Helper()
	approved := map[int]time.Time{}
	for _, a := range p.Prediction.Approvals {
		at, ok := a.RequestedAt.Resolve(approved)
		if !ok {
			t.Fatalf("approval of wave %d asked at %+v, after an approval not given", a.Wave, a.RequestedAt)
		}
		approved[a.Wave] = at
	}
	end, ok := p.Prediction.Finish.Resolve(approved)
	if !ok {
		t.Fatalf("the finish %+v counts from an approval not given", p.Prediction.Finish)
	}
	return end.Sub(demoT0)
}

// redStageEnd is when the stage of zone (region/zone) ends, its bake
// included: the red gate's reading falls within it.
func redStageEnd(t *testing.T, p predict.Plan, zone string) time.Duration {
	t.Helper()
	_, z, _ := strings.Cut(zone, "/")
	for _, st := range p.Stages {
		if strings.HasSuffix(st.Name, "/"+z) && st.End != nil {
			end, ok := st.End.Resolve(nil)
			if !ok {
				t.Fatalf("stage %s ends after an approval", st.Name)
			}
			return end.Sub(demoT0)
		}
	}
	t.Fatalf("no stage of zone %s in %+v", zone, p.Stages)
	return 0
}
