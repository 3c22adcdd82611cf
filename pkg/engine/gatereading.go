package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/pkg/gate"
	"github.com/myriarch/myriarch/pkg/rollout"
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
// their regions and zones (for a pass that is not split, those its agents
// report, joined with "|" for a =~ matcher), and the hosts to probe: the
// succeeded targets of the stage, or of the batch for a batch gate.
func GateRequest(in Input, d GateDue) gate.Request {
	r := in.Rollout
	st := r.Stages[d.Stage]
	req := gate.Request{Fleet: r.Fleet, Wave: r.Waves[st.Wave].Name, Stage: st.Name, ProbesOnly: d.Pass != StageGate}
	topo := r.Policy.Topology
	batch := -1
	if d.Pass != StageGate {
		batch = st.Passes[d.Pass].Gate.Batch
	}
	for pi, ps := range st.Passes {
		if d.Pass != StageGate && pi != d.Pass {
			continue
		}
		var regions, zones []string
		for _, t := range in.Targets {
			if t.Stage != d.Stage || t.Pass != pi || (batch >= 0 && t.Batch != batch) {
				continue
			}
			a := in.Agents[t.AgentID]
			regions = addUnique(regions, a.Attributes[topo.RegionAttribute])
			zones = addUnique(zones, a.Attributes[topo.ZoneAttribute])
			if t.Status == rollout.TargetSucceeded {
				req.Hosts = append(req.Hosts, gate.Host{AgentID: t.AgentID, Host: a.Attributes[topo.HostAttribute]})
			}
		}
		p := gate.Pass{Name: ps.Name, Region: ps.Region, Zone: ps.Zone}
		if p.Region == "" {
			p.Region = strings.Join(sorted(regions), "|")
		}
		if p.Zone == "" {
			p.Zone = strings.Join(sorted(zones), "|")
		}
		req.Passes = append(req.Passes, p)
	}
	slices.SortFunc(req.Hosts, func(a, b gate.Host) int { return strings.Compare(a.AgentID, b.AgentID) })
	return req
}

func addUnique(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func sorted(xs []string) []string { slices.Sort(xs); return xs }

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
