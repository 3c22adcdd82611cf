package engine

import (
	"testing"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

func TestCreate_AssignsWavesAndRefs(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.Waves = []policy.Wave{{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}}}
	})
	cands := []Candidate{
		{AgentID: "c", Attributes: selector.Map{"labels.wave": "canary"}, FromRef: "h1"},
		{AgentID: "x", FromRef: "h2"},
		{AgentID: "y", FromRef: "h3"},
	}
	r, ts, err := Create(NewRollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Policy: s, ToRef: "h9", Origin: rollout.OriginGitOps, Candidates: cands, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != rollout.Pending || len(r.Waves) != 2 || r.Waves[1].Name != policy.RestWaveName || !r.Waves[1].Implicit {
		t.Fatalf("rollout %+v, want pending with canary and the implicit rest wave", r)
	}
	byID := map[string]rollout.Target{}
	for _, tg := range ts {
		byID[tg.AgentID] = tg
	}
	if byID["c"].Wave != 0 || byID["x"].Wave != 1 || byID["y"].Wave != 1 {
		t.Fatalf("waves %+v", byID)
	}
	if byID["x"].FromRef != "h2" || byID["x"].ToRef != "h9" || byID["x"].Attempt != 1 || byID["x"].Status != rollout.TargetPending {
		t.Fatalf("target %+v, want from h2 to h9, attempt 1, pending", byID["x"])
	}
}

func TestAddStragglers_JoinLastWave(t *testing.T) {
	s := snap(policy.KindConfig, func(s *policy.Spec) { s.Waves = []policy.Wave{{Name: "a", Percent: 50}, {Name: "b", Percent: 100}} })
	r, _, err := Create(NewRollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Policy: s, ToRef: "h9", Candidates: []Candidate{{AgentID: "only"}}, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Waves[1].Status != rollout.WaveSkipped {
		t.Fatalf("wave b %s, want skipped (1 agent at 50%% fills wave a)", r.Waves[1].Status)
	}
	r2, ts := AddStragglers(r, []Candidate{{AgentID: "late", FromRef: "h0"}})
	if len(ts) != 1 || ts[0].Wave != 1 || ts[0].FromRef != "h0" || ts[0].ToRef != "h9" {
		t.Fatalf("stragglers %+v, want one in wave 1 from h0 to h9", ts)
	}
	if r2.Waves[1].Status != rollout.WavePending || r.Waves[1].Status != rollout.WaveSkipped {
		t.Fatal("the skipped last wave must be pending again, without changing the input rollout")
	}
}
