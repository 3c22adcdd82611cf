package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/rollout"
)

// The pure side of a gate reading: which gates are due, what a reading
// covers, and recording it. The adapter performs the reading in between.

// DueGates lists the gates of r whose reading is due at now, each with the
// time it was due (its identity: recording it twice is a no-op).
func DueGates(r rollout.Rollout, now time.Time) []GateDue {
	var out []GateDue
	for s, st := range r.Stages {
		switch st.Status {
		case rollout.StageBaking:
			if st.Gate != nil && st.Gate.Due(now) {
				out = append(out, GateDue{Stage: s, Pass: StageGate})
			}
		case rollout.StageRunning:
			for pi, ps := range st.Passes {
				if ps.Gate != nil && ps.Cleared <= ps.Gate.Batch && ps.Gate.Due(now) {
					out = append(out, GateDue{Stage: s, Pass: pi})
				}
			}
		}
	}
	return out
}

// GateState is the state of the gate d names (nil when it has none).
func GateState(r rollout.Rollout, d GateDue) *gate.State {
	if d.Stage < 0 || d.Stage >= len(r.Stages) {
		return nil
	}
	st := r.Stages[d.Stage]
	if d.Pass == StageGate {
		return st.Gate
	}
	if d.Pass < 0 || d.Pass >= len(st.Passes) || st.Passes[d.Pass].Gate == nil {
		return nil
	}
	return &st.Passes[d.Pass].Gate.State
}

// GateRequest is what a reading of gate d covers: the stage's passes with
// their regions and zones (PassScopes; several joined with "|" for a =~
// matcher), and the hosts to probe: the succeeded targets of the stage, or
// of the batch for a batch gate.
func GateRequest(in Input, d GateDue) gate.Request {
	r := in.Rollout
	st := r.Stages[d.Stage]
	req := gate.Request{Fleet: r.Fleet, Wave: r.Waves[st.Wave].Name, Stage: st.Name, ProbesOnly: d.Pass != StageGate}
	batch := -1
	if d.Pass != StageGate {
		batch = st.Passes[d.Pass].Gate.Batch
	}
	covered := func(t rollout.Target) bool {
		return t.Stage == d.Stage && (d.Pass == StageGate || t.Pass == d.Pass) && (batch < 0 || t.Batch == batch)
	}
	scopes := PassScopes(r, in.Targets, in.Agents, covered)
	for pi, ps := range st.Passes {
		if d.Pass != StageGate && pi != d.Pass {
			continue
		}
		sc := scopes[PassKey{Stage: d.Stage, Pass: pi}]
		req.Passes = append(req.Passes, gate.Pass{Name: ps.Name, Region: strings.Join(sc.Regions, "|"), Zone: strings.Join(sc.Zones, "|")})
	}
	for _, t := range in.Targets {
		if covered(t) && t.Status == rollout.TargetSucceeded {
			req.Hosts = append(req.Hosts, gate.Host{AgentID: t.AgentID, Host: in.Agents[t.AgentID].Attributes[r.Policy.Topology.HostAttribute]})
		}
	}
	slices.SortFunc(req.Hosts, func(a, b gate.Host) int { return strings.Compare(a.AgentID, b.AgentID) })
	return req
}

// PassKey names a pass of a rollout: its stage and its index there.
type PassKey struct{ Stage, Pass int }

// PassScope is where a pass sits: the regions and zones its gate queries.
type PassScope struct{ Regions, Zones []string }

// PassScopes gives every pass of r its scope: its own region and zone where
// its wave splits by them, else the distinct values its agents report (of
// the targets that in keeps; nil keeps all), sorted. An agent that is
// deleted, or lacks the attribute, adds none. Example: a canary pass of
// k1 (us-1/us-1c) and k2 (ap-1/ap-1a) covers regions [ap-1 us-1] and zones
// [ap-1a us-1c]; a pass eu-1/eu-1a covers [eu-1] and [eu-1a].
func PassScopes(r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent, in func(rollout.Target) bool) map[PassKey]PassScope {
	out := map[PassKey]PassScope{}
	for s, st := range r.Stages {
		for p, ps := range st.Passes {
			var sc PassScope
			if ps.Region != "" {
				sc.Regions = []string{ps.Region}
			}
			if ps.Zone != "" {
				sc.Zones = []string{ps.Zone}
			}
			out[PassKey{s, p}] = sc
		}
	}
	topo := r.Policy.Topology
	for _, t := range ts {
		k := PassKey{t.Stage, t.Pass}
		sc, ok := out[k]
		if !ok || (in != nil && !in(t)) {
			continue
		}
		ps, a := r.Stages[t.Stage].Passes[t.Pass], agents[t.AgentID]
		if ps.Region == "" {
			sc.Regions = addUnique(sc.Regions, a.Attributes[topo.RegionAttribute])
		}
		if ps.Zone == "" {
			sc.Zones = addUnique(sc.Zones, a.Attributes[topo.ZoneAttribute])
		}
		out[k] = sc
	}
	for k, sc := range out {
		slices.Sort(sc.Regions)
		slices.Sort(sc.Zones)
		out[k] = sc
	}
	return out
}

func addUnique(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// RecordReading stores the reading of gate d taken at at, if the gate is
// still due at dueAt: a retried task, or a reading that lost a race with
// another, records nothing twice. It reports whether r changed.
func RecordReading(r *rollout.Rollout, d GateDue, dueAt, at time.Time, results []gate.Result) bool {
	g := GateState(*r, d)
	if g == nil || g.NextAt == nil || !g.NextAt.Equal(dueAt) {
		return false
	}
	interval := time.Duration(0)
	if h := r.Policy.Health; h != nil {
		interval = h.Interval
	}
	next := g.Record(at, results, interval)
	r.Stages = append([]rollout.Stage(nil), r.Stages...)
	st := &r.Stages[d.Stage]
	if d.Pass == StageGate {
		st.Gate = &next
		return true
	}
	st.Passes = append([]rollout.Pass(nil), st.Passes...)
	bg := *st.Passes[d.Pass].Gate
	bg.State = next
	st.Passes[d.Pass].Gate = &bg
	return true
}
