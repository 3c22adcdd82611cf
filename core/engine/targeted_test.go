package engine

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// TestProperty_EvaluateTargets_AsTheWholeEvaluation drives random rollouts as
// TestProperty_EngineInvariants does and, before every pass, evaluates a
// random subset of the targets alone: when EvaluateTargets accepts the
// subset, its changes are exactly what the whole pass changes in those
// targets, none of them failed, and it has no orders or events (so storing
// the subset's changes alone loses nothing: what else the whole pass would
// do follows from the stored targets at its next pass).
func TestProperty_EvaluateTargets_AsTheWholeEvaluation(t *testing.T) {
	accepted := 0
	rapid.Check(t, func(rt *rapid.T) {
		kind := rapid.SampledFrom([]policy.Kind{policy.KindConfig, policy.KindVersion}).Draw(rt, "kind")
		maxc := rapid.IntRange(0, 4).Draw(rt, "maxConcurrent")
		s := snap(kind, func(s *policy.Spec) {
			s.MaxConcurrent = &maxc
			s.FailureThreshold.MaxFailed = rapid.IntRange(0, 3).Draw(rt, "maxFailed")
		})
		nWaves := rapid.IntRange(1, 3).Draw(rt, "waves")
		waves := make([][]string, nWaves)
		n := rapid.IntRange(1, 10).Draw(rt, "agents")
		for i := 0; i < n; i++ {
			w := rapid.IntRange(0, nWaves-1).Draw(rt, "wave")
			waves[w] = append(waves[w], fmt.Sprintf("a%d", i))
		}
		f := newFixture(t, kind, s, waves...)
		for step, steps := 0, rapid.IntRange(1, 40).Draw(rt, "steps"); step < steps; step++ {
			perturb(rt, f)
			var subset []rollout.Target
			for _, tg := range f.ts {
				if rapid.Bool().Draw(rt, "inSubset") {
					subset = append(subset, tg)
				}
			}
			part, ok := EvaluateTargets(Input{Rollout: f.r, Targets: subset, Agents: f.agents, Now: f.now})
			whole := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now})
			if ok {
				accepted++
				checkSubset(rt, subset, part, whole)
			}
			f.store(whole)
		}
	})
	if accepted == 0 {
		t.Fatal("no subset was ever accepted: the property tested nothing")
	}
}

func checkSubset(rt *rapid.T, subset []rollout.Target, part, whole Result) {
	in := map[string]bool{}
	for _, tg := range subset {
		in[tg.AgentID] = true
	}
	want := map[string]rollout.Target{}
	for _, c := range whole.Changed {
		if in[c.AgentID] {
			want[c.AgentID] = c
		}
	}
	got := map[string]rollout.Target{}
	for _, c := range part.Changed {
		got[c.AgentID] = c
	}
	if !reflect.DeepEqual(got, want) {
		rt.Fatalf("the subset's changes differ from the whole pass's:\n got %+v\nwant %+v", got, want)
	}
	if len(part.Orders)+len(part.Events) > 0 {
		rt.Fatalf("an accepted subset has orders %v or events %v", part.Orders, part.Events)
	}
	for _, c := range part.Changed {
		if c.Status.Final() && c.Status != rollout.TargetSucceeded {
			rt.Fatalf("an accepted subset finished target %s (%s): the threshold must decide after that", c.AgentID, c.Status)
		}
	}
}

func TestEvaluateTargets_ReportMovesTargetToVerifying(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1", "a2", "a3"})
	f.tick() // starts every target
	f.wantTarget("a1", rollout.TargetInProgress)
	f.advance(time.Second)
	f.apply("a1")
	before := f.r
	res, ok := EvaluateTargets(Input{Rollout: f.r, Targets: []rollout.Target{f.target("a1")}, Agents: f.agents, Now: f.now})
	if !ok {
		t.Fatal("an APPLIED report of a target in progress must be decided alone")
	}
	if len(res.Changed) != 1 || res.Changed[0].Status != rollout.TargetVerifying || !res.Changed[0].VerifiedAt.Equal(f.now) {
		t.Fatalf("changed = %+v, want a1 verifying since now", res.Changed)
	}
	if !reflect.DeepEqual(res.Rollout.Waves, before.Waves) || res.Rollout.Status != before.Status {
		t.Fatalf("the rollout changed: %+v", res.Rollout)
	}
}

// A health wait that ended succeeds its target alone; the wave it completes
// is the whole pass's to find.
func TestEvaluateTargets_SuccessAlone(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1"}, []string{"b1"})
	f.tick()
	f.apply("a1")
	f.tick()
	f.advance(time.Hour) // past the health wait
	res, ok := EvaluateTargets(Input{Rollout: f.r, Targets: []rollout.Target{f.target("a1")}, Agents: f.agents, Now: f.now})
	if !ok || len(res.Changed) != 1 || res.Changed[0].Status != rollout.TargetSucceeded {
		t.Fatalf("ok %v, changed %+v: want a1 succeeded alone", ok, res.Changed)
	}
	if res.Rollout.Waves[0].Status != rollout.WaveRunning {
		t.Fatalf("wave 0 is %s: the targeted step changes no wave", res.Rollout.Waves[0].Status)
	}
	f.store(res)
	f.tick()
	f.wantWave(0, rollout.WaveCompleted)
	f.wantTarget("b1", rollout.TargetInProgress)
}

func TestEvaluateTargets_NeedsTheWholeRollout(t *testing.T) {
	cases := map[string]func(f *fixture) []rollout.Target{
		"pending rollout": func(f *fixture) []rollout.Target { return []rollout.Target{f.target("a1")} },
		"pending target": func(f *fixture) []rollout.Target {
			f.tick()
			return []rollout.Target{f.target("b1")} // the second wave's, not started
		},
		"a failure": func(f *fixture) []rollout.Target {
			f.tick()
			f.update("a1", func(a *agent.Agent) { a.RemoteConfig.Hash, a.RemoteConfig.Status = "h-new", agent.ConfigFailed })
			return []rollout.Target{f.target("a1")}
		},
		"rolling back": func(f *fixture) []rollout.Target {
			f.tick()
			f.apply("a1") // on the new configuration: the rollback waits for it
			f.tick()
			if err := f.act(Request{Action: ActionRollback}); err != nil {
				f.t.Fatal(err)
			}
			f.wantRollout(rollout.RollingBack)
			return []rollout.Target{f.target("a1")}
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1", "a2"}, []string{"b1"})
			subset := setup(f)
			if res, ok := EvaluateTargets(Input{Rollout: f.r, Targets: subset, Agents: f.agents, Now: f.now}); ok {
				t.Fatalf("accepted (%+v); the whole pass must decide", res.Changed)
			}
		})
	}
}

// A target whose start is ordered again (its agent is not asked for its hash
// yet: the starting pass is still setting the hashes) is left to the passes
// of the whole rollout: the targeted step neither orders it again nor
// refuses, and the report of another agent of the batch is decided.
func TestEvaluateTargets_LeavesAStartOrderedAgainToTheWholePass(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1", "a2"})
	f.tick()
	f.update("a1", func(a *agent.Agent) { a.DesiredHash = "h-old" })
	f.advance(time.Second)
	f.apply("a2")
	res, ok := EvaluateTargets(Input{Rollout: f.r, Targets: []rollout.Target{f.target("a1"), f.target("a2")}, Agents: f.agents, Now: f.now})
	if !ok || len(res.Orders) != 0 {
		t.Fatalf("accepted %v, orders %+v: want accepted without orders", ok, res.Orders)
	}
	if len(res.Changed) != 1 || res.Changed[0].AgentID != "a2" || res.Changed[0].Status != rollout.TargetVerifying {
		t.Fatalf("changed %+v, want a2 verifying alone", res.Changed)
	}
	if whole := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now}); len(whole.Orders) != 1 || whole.Orders[0].AgentID != "a1" {
		t.Fatalf("whole pass orders %+v, want a1's start again", whole.Orders)
	}
}

// A failure below the threshold ends the only target of wave 0, so the
// evaluation of the whole rollout completes the wave and starts wave 1 at
// once: a pending target of wave 1 is the whole rollout's to decide, not a
// subset's, even in the evaluation that ends the wave before it. (A rapid
// failure of TestProperty_EvaluateTargets_AsTheWholeEvaluation: a subset of a2
// alone was accepted and started nothing, where the whole evaluation
// started it.)
func TestEvaluateTargets_PendingTargetOfTheWaveAboutToStart(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.FailureThreshold.MaxFailed = 2 }),
		[]string{"a0"}, []string{"a1", "a2"})
	f.apply("a0") // the new configuration, reported before the start
	f.tick()      // starts a0
	f.health("a0", false, "StatusPermanentError", "boom")
	in := Input{Rollout: f.r, Targets: []rollout.Target{f.target("a2")}, Agents: f.agents, Now: f.now}
	if res, ok := EvaluateTargets(in); ok {
		t.Fatalf("accepted (changed %+v); the whole rollout must decide", res.Changed)
	}
	f.tick()
	f.wantTarget("a0", rollout.TargetFailed)
	f.wantWave(0, rollout.WaveCompleted)
	f.wantPass(passExpectation{
		starts:   []string{"a1", "a2"},
		changed:  map[string]rollout.TargetStatus{"a0": rollout.TargetFailed, "a1": rollout.TargetInProgress, "a2": rollout.TargetInProgress},
		deadline: t0.Add(10 * time.Minute), // applyTimeout of a1 and a2
	})
}
