// Package waves distributes the targets of a new rollout over the waves of
// its policy (docs/policy.md, "Waves"). The distribution is a snapshot taken
// once, when the rollout is created; it is pure and needs no clock.
package waves

import (
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// Candidate is one relevant agent of the new rollout: its ID and the
// attribute view that selector waves match.
type Candidate struct {
	AgentID    string
	Attributes selector.Attributes
}

// attributes is the candidate's view; none is an empty view, which only an
// empty selector matches.
func (c Candidate) attributes() selector.Attributes {
	if c.Attributes == nil {
		return selector.Map(nil)
	}
	return c.Attributes
}

// Plan is the distribution: Members[i] lists the agent IDs of Waves[i],
// ascending by sha256(rolloutID || agentID), so that the plan does not depend
// on the order of the candidates. One slice per wave (carved from one backing
// array) is the cheapest shape for 100,000 agents and turns into targets with
// a plain loop.
type Plan struct {
	Waves   []rollout.Wave
	Members [][]string
}

// Marks in waveOf for a candidate that no wave has taken yet, and for the
// later copies of a repeated agent ID, which no wave takes.
const (
	unassigned = -1
	repeated   = -2
)

// Assign distributes the candidates over the waves ws of a policy snapshot,
// in policy order:
//   - a selector wave takes every unassigned candidate whose attributes match;
//   - a percent wave takes unassigned candidates in hash order until the
//     cumulative count of all assigned candidates reaches share(percent, n);
//     candidates of earlier selector waves count, so it may take none;
//   - if the last wave does not reach 100 percent (a percent below 100, or a
//     selector wave), the implicit wave rest with 100 percent takes the rest.
//
// A wave with a selector is a selector wave even if it also has a percent.
// Waves without members are skipped, all others pending. Candidates with a
// repeated AgentID count once, with the attributes of the first.
func Assign(rolloutID string, ws []policy.Wave, candidates []Candidate) Plan {
	order := hashOrder(rolloutID, candidates)
	planned := withRest(ws)
	waveOf := distribute(planned, order, candidates)
	members := group(order, waveOf, candidates, len(planned))
	for i := range planned {
		planned[i].Status = rollout.WavePending
		if len(members[i]) == 0 {
			planned[i].Status = rollout.WaveSkipped
		}
	}
	return Plan{Waves: planned, Members: members}
}

// withRest copies the policy waves into rollout waves and appends the
// implicit rest wave when the last one does not reach 100 percent.
func withRest(ws []policy.Wave) []rollout.Wave {
	out := make([]rollout.Wave, 0, len(ws)+1)
	for i, w := range ws {
		out = append(out, rollout.Wave{Index: i, Name: w.Name, Percent: w.Percent, Selector: cloneSelector(w.Selector), RequireApproval: w.RequireApproval})
	}
	if n := len(ws); n == 0 || ws[n-1].Selector != nil || ws[n-1].Percent < 100 {
		out = append(out, rollout.Wave{Index: len(ws), Name: policy.RestWaveName, Percent: 100, Implicit: true})
	}
	return out
}

// cloneSelector copies the selector, so that the rollout's waves share no
// map with the policy snapshot they came from.
func cloneSelector(s *selector.Selector) *selector.Selector {
	if s == nil {
		return nil
	}
	c := s.Clone()
	return &c
}

// distribute returns the wave index of each candidate. Selector waves read
// the candidates in input order, which visits their attribute maps in the
// order they were allocated; percent waves share one cursor through the hash
// order: everything before it is assigned, so no wave looks at a candidate
// twice.
func distribute(planned []rollout.Wave, order []int32, candidates []Candidate) []int32 {
	waveOf := make([]int32, len(candidates))
	for c := range waveOf {
		waveOf[c] = repeated
	}
	for _, c := range order {
		waveOf[c] = unassigned
	}
	n, assigned, cursor := len(order), 0, 0
	for i, w := range planned {
		if w.Selector != nil {
			for c := range candidates {
				if waveOf[c] == unassigned && w.Selector.Matches(candidates[c].attributes()) {
					waveOf[c] = int32(i)
					assigned++
				}
			}
			continue
		}
		for goal := min(share(w.Percent, n), n); assigned < goal; cursor++ {
			if c := order[cursor]; waveOf[c] == unassigned {
				waveOf[c] = int32(i)
				assigned++
			}
		}
	}
	return waveOf
}

// share is the cumulative number of targets a percent wave reaches:
// ceil(percent × total / 100) in integers. 10 agents at 25 % → (250+99)/100
// = 3; 4 at 25 % → 1; 3 at 34 % → (102+99)/100 = 2.
func share(percent, total int) int { return (percent*total + 99) / 100 }

// group lists the agent IDs of each wave in hash order, all in one backing
// array.
func group(order, waveOf []int32, candidates []Candidate, waves int) [][]string {
	counts := make([]int, waves)
	for _, c := range order {
		counts[waveOf[c]]++
	}
	backing := make([]string, len(order))
	members := make([][]string, waves)
	start := 0
	for i, c := range counts {
		members[i] = backing[start : start : start+c]
		start += c
	}
	for _, c := range order {
		w := waveOf[c]
		members[w] = append(members[w], candidates[c].AgentID)
	}
	return members
}

// LastWave is the index of the wave that receives stragglers: agents that
// became relevant after the rollout was created join the last wave
// (docs/rollouts.md, "A run, step by step"). After Assign it is always len(ws)-1 ≥ 0,
// because the rest wave guarantees at least one wave; -1 for no waves.
func LastWave(ws []rollout.Wave) int { return len(ws) - 1 }

// FirstAttempt is the attempt counter of a new target; retry-failed
// increases it, so ackedFailures never lists <agentId>#0.
const FirstAttempt = 1

// Targets turns the plan into pending targets of rolloutID, wave by wave.
// fromRef gives the hash or version an agent starts from; toRef is what the
// rollout brings every target to.
func (p Plan) Targets(rolloutID string, fromRef func(agentID string) string, toRef string) []rollout.Target {
	total := 0
	for _, m := range p.Members {
		total += len(m)
	}
	out := make([]rollout.Target, 0, total)
	for i, m := range p.Members {
		for _, id := range m {
			out = append(out, rollout.Target{
				RolloutID: rolloutID, AgentID: id, Wave: p.Waves[i].Index,
				Status: rollout.TargetPending, Attempt: FirstAttempt,
				FromRef: fromRef(id), ToRef: toRef,
			})
		}
	}
	return out
}
