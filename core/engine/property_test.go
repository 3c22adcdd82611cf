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

// TestProperty_EngineInvariants drives random rollouts with random agent
// reports, clock steps and operator actions, and checks after every pass:
// never more than maxConcurrent targets in progress; nothing starts while a
// wave has failed; every started target was pending; no final target changes
// in a pass except through a rollback; no target both succeeds and fails; the
// next deadline, when there is one, lies after now (one at or before now
// makes the state machine evaluate again at once, in a loop).
func TestProperty_EngineInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kind := rapid.SampledFrom([]policy.Kind{policy.KindConfig, policy.KindVersion}).Draw(rt, "kind")
		maxc := rapid.IntRange(0, 4).Draw(rt, "maxConcurrent")
		s := snap(kind, func(s *policy.Spec) {
			s.MaxConcurrent = &maxc
			s.FailureThreshold.MaxFailed = rapid.IntRange(0, 3).Draw(rt, "maxFailed")
			if rapid.Bool().Draw(rt, "rollback") {
				s.OnFailure = policy.OnFailureRollback
			}
		})
		nWaves := rapid.IntRange(1, 3).Draw(rt, "waves")
		waves := make([][]string, nWaves)
		n := rapid.IntRange(1, 12).Draw(rt, "agents")
		for i := 0; i < n; i++ {
			w := rapid.IntRange(0, nWaves-1).Draw(rt, "wave")
			waves[w] = append(waves[w], fmt.Sprintf("a%d", i))
		}
		f := newFixture(t, kind, s, waves...)
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			perturb(rt, f)
			before := append([]rollout.Target(nil), f.ts...)
			res := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now})
			checkPass(rt, f, before, res)
			f.store(res)
		}
	})
}

func perturb(rt *rapid.T, f *fixture) {
	ids := make([]string, 0, len(f.agents))
	for _, tg := range f.ts {
		ids = append(ids, tg.AgentID)
	}
	id := rapid.SampledFrom(ids).Draw(rt, "agent")
	switch rapid.IntRange(0, 9).Draw(rt, "event") {
	case 0, 1, 2:
		f.apply(id)
	case 3:
		f.health(id, true, agent.StatusOK, "")
	case 4:
		f.health(id, false, agent.StatusStarting, "")
	case 5:
		f.health(id, false, "StatusPermanentError", "boom")
	case 6:
		f.update(id, func(a *agent.Agent) { a.Online = !a.Online })
	case 7:
		f.update(id, func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigFailed })
	case 8:
		a := rapid.SampledFrom(Actions).Draw(rt, "action")
		_ = f.act(Request{Action: a, Wave: rapid.IntRange(0, len(f.r.Waves)-1).Draw(rt, "approveWave")})
	}
	f.advance(time.Duration(rapid.IntRange(0, 300).Draw(rt, "seconds")) * time.Second)
}

func checkPass(rt *rapid.T, f *fixture, before []rollout.Target, res Result) {
	if d := res.NextDeadline; !d.IsZero() && !d.After(f.now) {
		rt.Fatalf("next deadline %s is not after now %s", d, f.now)
	}
	after := append([]rollout.Target(nil), before...)
	for _, c := range res.Changed {
		for i := range after {
			if after[i].AgentID == c.AgentID {
				after[i] = c
			}
		}
	}
	inFlight := 0
	for i, t := range after {
		if t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying {
			inFlight++
		}
		was := before[i].Status
		if was.Final() && t.Status != was && !(t.RollbackAt != nil && (t.Status == rollout.TargetRolledBack || t.Status == rollout.TargetSkipped)) {
			rt.Fatalf("target %s changed from final %s to %s outside a rollback", t.AgentID, was, t.Status)
		}
		if was == rollout.TargetSucceeded && t.Status == rollout.TargetFailed || was == rollout.TargetFailed && t.Status == rollout.TargetSucceeded {
			rt.Fatalf("target %s both succeeded and failed", t.AgentID)
		}
	}
	if m := res.Rollout.Policy.MaxConcurrent; m > 0 && inFlight > m && startsIn(res) > 0 {
		rt.Fatalf("%d targets in progress after starting more, maxConcurrent %d", inFlight, m)
	}
	failedWave := false
	for _, w := range res.Rollout.Waves {
		failedWave = failedWave || w.Status == rollout.WaveFailed
	}
	for _, o := range res.Orders {
		if o.Kind != OrderStart {
			continue
		}
		if failedWave {
			rt.Fatalf("target %s started while a wave has failed", o.AgentID)
		}
		for i := range before {
			if before[i].AgentID == o.AgentID && !before[i].Status.NotStarted() {
				rt.Fatalf("started target %s was %s, not pending", o.AgentID, before[i].Status)
			}
		}
	}
}

func startsIn(res Result) int {
	n := 0
	for _, o := range res.Orders {
		if o.Kind == OrderStart {
			n++
		}
	}
	return n
}

// TestProperty_IgnoresWhatAgentsAreAsked: a pass decides the same whatever
// the agents are asked to run (desiredHash, targetVersion, packageOffer),
// which the passes' own orders and the planner write, and whatever hash of
// their effective configuration they report. The agent-event path relies
// on it (agentevent.Matters): a change of only those fields sets off no
// pass. What they are asked changes one thing alone: a configuration target
// that was in progress before the pass, whose agent is not asked for its
// hash, has its start ordered again (and only such a target).
func TestProperty_IgnoresWhatAgentsAreAsked(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kind := rapid.SampledFrom([]policy.Kind{policy.KindConfig, policy.KindVersion}).Draw(rt, "kind")
		maxc := rapid.IntRange(0, 4).Draw(rt, "maxConcurrent")
		s := snap(kind, func(s *policy.Spec) { s.MaxConcurrent = &maxc })
		n := rapid.IntRange(1, 8).Draw(rt, "agents")
		var ids []string
		for i := 0; i < n; i++ {
			ids = append(ids, fmt.Sprintf("a%d", i))
		}
		f := newFixture(t, kind, s, ids)
		refs := []string{"", "h-old", "h-new", "0.161.0", "0.162.0"}
		for step, steps := 0, rapid.IntRange(1, 30).Draw(rt, "steps"); step < steps; step++ {
			perturb(rt, f)
			asked := make(map[string]agent.Agent, len(f.agents))
			for id, a := range f.agents {
				a.DesiredHash = rapid.SampledFrom(refs).Draw(rt, "desiredHash")
				a.TargetVersion = rapid.SampledFrom(refs).Draw(rt, "targetVersion")
				a.PackageOffer = rapid.SampledFrom(refs).Draw(rt, "packageOffer")
				a.EffectiveHash = rapid.SampledFrom(refs).Draw(rt, "effectiveHash")
				asked[id] = a
			}
			res := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: f.agents, Now: f.now})
			other := Evaluate(Input{Rollout: f.r, Targets: f.ts, Agents: asked, Now: f.now})
			decided, otherDecided := res, other
			decided.Orders, otherDecided.Orders = nil, nil
			if !reflect.DeepEqual(decided, otherDecided) {
				rt.Fatalf("the pass depends on what the agents are asked to run:\n%+v\n%+v", res, other)
			}
			wantReissued(rt, f, res, f.agents)
			wantReissued(rt, f, other, asked)
			f.store(res)
		}
	})
}

// wantReissued checks the orders of a pass over agents: the starts of the
// targets the pass started, the starts ordered again for the configuration
// targets in progress whose agent is not asked for their hash, and the
// orders of other kinds (resets, cancels), which do not depend on it.
func wantReissued(rt *rapid.T, f *fixture, res Result, agents map[string]agent.Agent) {
	before := map[string]rollout.Target{}
	for _, t := range f.ts {
		before[t.AgentID] = t
	}
	reissues := map[string]bool{}
	for _, o := range res.Orders {
		t := before[o.AgentID]
		if o.Kind != OrderStart || t.Status == rollout.TargetPending {
			continue
		}
		reissue := f.r.Kind == policy.KindConfig && t.Status == rollout.TargetInProgress && agents[o.AgentID].DesiredHash != t.ToRef
		if !reissue && t.Status == rollout.TargetInProgress {
			rt.Fatalf("start of %s ordered again, whose agent is asked for %q (target %s): %+v", o.AgentID, agents[o.AgentID].DesiredHash, t.ToRef, res.Orders)
		}
		reissues[o.AgentID] = reissue
	}
	after := map[string]rollout.TargetStatus{}
	for _, c := range res.Changed {
		after[c.AgentID] = c.Status
	}
	for id, t := range before {
		a, ok := agents[id]
		still := t.Status == rollout.TargetInProgress && (after[id] == "" || after[id] == rollout.TargetInProgress)
		if f.r.Kind == policy.KindConfig && inFlightEvaluated(f.r.Status) && still && ok && a.DesiredHash != t.ToRef && !reissues[id] {
			rt.Fatalf("%s in progress, asked for %q instead of %s, is not ordered again: %+v", id, a.DesiredHash, t.ToRef, res.Orders)
		}
	}
}

// inFlightEvaluated is whether a pass of a rollout in status s evaluates
// its targets in flight (Evaluate); a rollback evaluates its own.
func inFlightEvaluated(s rollout.Status) bool {
	switch s {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
		return true
	}
	return false
}
