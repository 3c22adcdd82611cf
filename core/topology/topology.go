// Package topology splits the waves of a rollout into stages, passes and
// batches by the region and zone of its agents (docs/policy.md, "Regions and
// zones"). It runs once, when the rollout is created, after core/waves gave
// every target its wave; it is pure and needs no clock.
//
//   - A stage is a group of passes that run together and are followed by the
//     same bake. A wave without by is one stage named after the wave.
//   - A pass is the work on one region (by: region) or one zone (by: zone)
//     within a stage; it runs its targets in batches of maxUnavailable, one
//     batch after the other.
//
// Stored form: a rollout may have 100,000 targets, so the Layout the rollout
// keeps has no agent IDs, only the names and counts of its stages, passes and
// batches (a few hundred bytes per pass); each target keeps its Placement
// (stage, pass and batch indexes). Pass.Targets lists the agent IDs in memory
// and is not stored: it is rebuilt from the placements when needed.
package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/waves"
)

// Target is one target of the rollout: its agent, the index of its wave in
// the rollout's waves (rollout.Target.Wave; the implicit wave rest is the
// one after the snapshot's waves) and the agent's attribute view.
type Target struct {
	AgentID    string
	Wave       int
	Attributes selector.Attributes
}

// Layout is the stages of a rollout in the order they run.
type Layout struct {
	Stages []Stage `json:"stages"`
}

// Stage is a group of passes run together, followed by the wave's bake.
// Its name is <wave>, <wave>/<region>[+<region>] or <wave>/<zone>[+<zone>].
type Stage struct {
	Name   string `json:"name"`
	Wave   int    `json:"wave"` // index in the rollout's waves
	Passes []Pass `json:"passes"`
}

// Pass is the work on one region or zone within a stage. Its name is
// <wave>, <wave>/<region> or <wave>/<region>/<zone>.
type Pass struct {
	Name      string `json:"name"`
	Region    string `json:"region,omitempty"`
	Zone      string `json:"zone,omitempty"`
	Size      int    `json:"size"`      // targets in the pass
	BatchSize int    `json:"batchSize"` // targets per batch: maxUnavailable of the pass
	Batches   int    `json:"batches"`   // ceil(Size / BatchSize), more after stragglers
	// Targets are the agent IDs in batch order. Not stored: every target
	// stores its Placement instead.
	Targets []string `json:"-"`
}

// Placement is where a target runs: the indexes of its stage in the layout,
// of its pass in the stage and of its batch in the pass.
type Placement struct {
	Stage int `json:"stage"`
	Pass  int `json:"pass"`
	Batch int `json:"batch"`
}

// BatchName is the name of batch b of the pass in logs and the timeline:
// rest/eu-2/eu-2a#0.
func (p Pass) BatchName(b int) string { return p.Name + "#" + strconv.Itoa(b) }

// Compute splits the targets of a rollout into its layout. placements[i] is
// where targets[i] runs. Within a pass the targets are ordered by
// sha256(rolloutID || agentID), the order of core/waves, and cut into batches
// of the wave's maxUnavailable.
//
// The error is a *MissingAttributeError (joined, one per wave) when agents
// of a wave with by lack the region or zone attribute: such an agent would
// otherwise be dropped from the rollout without a word. A wave index out of
// range or a repeated agent ID is an error too.
func Compute(rolloutID string, s policy.Snapshot, targets []Target) (Layout, []Placement, error) {
	byWave, err := groupByWave(rolloutID, s, targets)
	if err != nil {
		return Layout{}, nil, err
	}
	attrs := attributeNames(s)
	var l Layout
	placements := make([]Placement, len(targets))
	var errs []error
	for w, members := range byWave {
		if len(members) == 0 {
			continue
		}
		wave := waveAt(s, w)
		passes, err := passesOf(wave, members, targets, attrs, s.Regions)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, st := range stagesOf(wave, w, passes) {
			l.Stages = append(l.Stages, st.place(len(l.Stages), wave.MaxUnavailable, targets, placements))
		}
	}
	if len(errs) > 0 {
		return Layout{}, nil, joinErrors(errs)
	}
	return l, placements, nil
}

// waveAt is the wave of index w: a snapshot wave, or the implicit rest after
// them.
func waveAt(s policy.Snapshot, w int) policy.Wave {
	if w < len(s.Waves) {
		return s.Waves[w]
	}
	return s.RestWave()
}

type attributes struct{ region, zone string }

func attributeNames(s policy.Snapshot) attributes {
	return attributes{
		region: cmp.Or(s.Topology.RegionAttribute, policy.DefaultRegionAttribute),
		zone:   cmp.Or(s.Topology.ZoneAttribute, policy.DefaultZoneAttribute),
	}
}

// groupByWave returns the indexes of the targets of each wave in hash order.
// One backing array holds them all.
func groupByWave(rolloutID string, s policy.Snapshot, targets []Target) ([][]int32, error) {
	ids := make([]string, len(targets))
	for i, t := range targets {
		ids[i] = t.AgentID
		if t.Wave < 0 || t.Wave > len(s.Waves) {
			return nil, fmt.Errorf("target %s is in wave %d, but the rollout has waves 0 to %d", t.AgentID, t.Wave, len(s.Waves))
		}
	}
	order := waves.HashOrder(rolloutID, ids)
	if len(order) < len(targets) {
		return nil, fmt.Errorf("%d agent IDs are repeated among the targets; a rollout has one target per agent", len(targets)-len(order))
	}
	counts := make([]int, len(s.Waves)+1)
	for _, t := range targets {
		counts[t.Wave]++
	}
	backing := make([]int32, len(order))
	out := make([][]int32, len(counts))
	start := 0
	for w, c := range counts {
		out[w] = backing[start:start:(start + c)]
		start += c
	}
	for _, i := range order {
		w := targets[i].Wave
		out[w] = append(out[w], i)
	}
	return out, nil
}

// pass is a pass being built: its place in the topology and its members.
type pass struct {
	region, zone string
	members      []int32
}

// passesOf groups the members of a wave into its passes, per region in
// region order, and per zone in alphabetical order within a region. A wave
// without by is one pass.
func passesOf(wave policy.Wave, members []int32, targets []Target, attrs attributes, regionOrder []string) ([][]pass, error) {
	split := wave.By
	if split == "" {
		return [][]pass{{{members: members}}}, nil
	}
	byZone := split == policy.SplitZone || split == policy.SplitAZ
	type key struct{ region, zone string }
	groups := map[key][]int32{}
	var missing missingAttributes
	for _, i := range members {
		region, okRegion := lookup(targets[i].Attributes, attrs.region)
		zone, okZone := "", true
		if byZone {
			zone, okZone = lookup(targets[i].Attributes, attrs.zone)
		}
		if !okRegion || !okZone {
			missing.add(targets[i].AgentID)
			continue
		}
		k := key{region, zone}
		groups[k] = append(groups[k], i)
	}
	if missing.count > 0 {
		names := []string{attrs.region}
		if byZone {
			names = append(names, attrs.zone)
		}
		return nil, missing.err(wave.Name, split, names, len(members))
	}
	zonesOf := map[string][]string{}
	for k := range groups {
		zonesOf[k.region] = append(zonesOf[k.region], k.zone)
	}
	regions := orderRegions(zonesOf, regionOrder)
	out := make([][]pass, len(regions))
	for r, region := range regions {
		zones := zonesOf[region]
		slices.Sort(zones)
		for _, zone := range zones {
			out[r] = append(out[r], pass{region: region, zone: zone, members: groups[key{region, zone}]})
		}
	}
	return out, nil
}

// lookup reads an attribute; an empty value counts as missing, since it
// names no region or zone.
func lookup(a selector.Attributes, name string) (string, bool) {
	if a == nil {
		return "", false
	}
	v, ok := a.Attr(name)
	return v, ok && v != ""
}

// orderRegions lists the regions present: first those of regionOrder, in
// its order, then the others alphabetically.
func orderRegions(present map[string][]string, regionOrder []string) []string {
	out := make([]string, 0, len(present))
	listed := map[string]bool{}
	for _, r := range regionOrder {
		if _, ok := present[r]; ok && !listed[r] {
			out = append(out, r)
			listed[r] = true
		}
	}
	var others []string
	for r := range present {
		if !listed[r] {
			others = append(others, r)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// stage is a stage being built.
type stage struct {
	name   string
	wave   int
	passes []pass
	names  []string // pass names
}

// stagesOf groups the passes of a wave into stages. perRegion[r] are the
// passes of the r-th region (one for by: region or no by, one per zone for
// by: zone). With parallelRegions k the regions are taken k at a time in
// region order; stage j of such a group holds pass j of each of its regions
// (zone j in alphabetical order), so that with 3 zones in eu-2 and us-1 and
// k = 2 the stages are rest/eu-2a+us-1a, rest/eu-2b+us-1b, rest/eu-2c+us-1c.
func stagesOf(wave policy.Wave, w int, perRegion [][]pass) []stage {
	if wave.By == "" {
		return []stage{{name: wave.Name, wave: w, passes: perRegion[0], names: []string{wave.Name}}}
	}
	byZone := wave.By == policy.SplitZone || wave.By == policy.SplitAZ
	qualify := byZone && zonesRepeat(perRegion)
	k := max(wave.ParallelRegions, 1)
	var out []stage
	for g := 0; g < len(perRegion); g += k {
		group := perRegion[g:min(g+k, len(perRegion))]
		depth := 0
		for _, ps := range group {
			depth = max(depth, len(ps))
		}
		for j := range depth {
			st := stage{wave: w}
			var labels []string
			for _, ps := range group {
				if j >= len(ps) {
					continue // a region with fewer zones sits the later stages out
				}
				p := ps[j]
				label, name := p.region, wave.Name+"/"+p.region
				if byZone {
					label, name = p.zone, name+"/"+p.zone
					if qualify {
						label = p.region + "/" + p.zone
					}
				}
				labels = append(labels, label)
				st.passes = append(st.passes, p)
				st.names = append(st.names, name)
			}
			st.name = wave.Name + "/" + strings.Join(labels, "+")
			out = append(out, st)
		}
	}
	return out
}

// zonesRepeat reports whether a zone name is used in two regions (Azure
// numbers its zones 1, 2, 3 in every region): stage names then name the
// region too, rest/eu-2/1+us-1/1, so that no two stages have the same name.
func zonesRepeat(perRegion [][]pass) bool {
	seen := map[string]bool{}
	for _, ps := range perRegion {
		for _, p := range ps {
			if seen[p.zone] {
				return true
			}
			seen[p.zone] = true
		}
	}
	return false
}

// place turns the stage into its stored form, with stage index si, and
// writes the placement of each of its targets.
func (st stage) place(si int, maxUnavailable policy.Amount, targets []Target, placements []Placement) Stage {
	out := Stage{Name: st.name, Wave: st.wave, Passes: make([]Pass, len(st.passes))}
	for pi, p := range st.passes {
		size := len(p.members)
		batch := maxUnavailable.Of(size)
		ids := make([]string, size)
		for pos, i := range p.members {
			ids[pos] = targets[i].AgentID
			placements[i] = Placement{Stage: si, Pass: pi, Batch: pos / batch}
		}
		out.Passes[pi] = Pass{
			Name: st.names[pi], Region: p.region, Zone: p.zone,
			Size: size, BatchSize: batch, Batches: ceilDiv(size, batch), Targets: ids,
		}
	}
	return out
}

// ceilDiv is ceil(a / b) in integers: 10 targets in batches of 4 → 3.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// AddStragglers places agents that became relevant after the rollout was
// created. They join the last wave (core/waves.LastWave, as the planner adds
// them), and in the layout the last pass of the last stage, in new batches
// after that pass's own, each of the pass's batch size: batches that already
// ran are not run again. When the last stage belongs to an earlier wave
// (the last wave had no targets and was skipped), the stragglers make a new
// stage of the last wave with one pass. The layout l is not changed; the
// result shares no pass with it.
func AddStragglers(s policy.Snapshot, l Layout, lastWave int, agentIDs []string) (Layout, []Placement) {
	if len(agentIDs) == 0 {
		return l, nil
	}
	out := Layout{Stages: slices.Clone(l.Stages)}
	if n := len(out.Stages); n == 0 || out.Stages[n-1].Wave != lastWave {
		wave := waveAt(s, lastWave)
		out.Stages = append(out.Stages, Stage{Name: wave.Name, Wave: lastWave, Passes: []Pass{{
			Name: wave.Name, BatchSize: wave.MaxUnavailable.Of(len(agentIDs)),
		}}})
	}
	si := len(out.Stages) - 1
	last := &out.Stages[si]
	last.Passes = slices.Clone(last.Passes)
	pi := len(last.Passes) - 1
	p := &last.Passes[pi]
	p.Targets = append(slices.Clip(p.Targets), agentIDs...)
	placements := make([]Placement, len(agentIDs))
	for i := range agentIDs {
		placements[i] = Placement{Stage: si, Pass: pi, Batch: p.Batches + i/p.BatchSize}
	}
	p.Size += len(agentIDs)
	p.Batches += ceilDiv(len(agentIDs), p.BatchSize)
	return out, placements
}
