package topology

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/waves"
)

// snapshot parses spec lines into a policy snapshot; the test fails on any issue.
func snapshot(t testing.TB, spec string) policy.Snapshot {
	t.Helper()
	doc := "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: p}\nspec:\n  " + strings.ReplaceAll(spec, "\n", "\n  ") + "\n"
	p, issues := policy.Parse([]byte(doc))
	if len(issues) != 0 {
		t.Fatalf("policy issues: %v", issues)
	}
	return p.Snapshot(policy.KindConfig)
}

// fleet is perZone agents in every zone of every region: "<zone>-<n>" with
// the attributes region and az; the agent eu-1a-0 is the canary.
func fleet(regions []string, zones []string, perZone int) []waves.Candidate {
	var out []waves.Candidate
	for _, r := range regions {
		for _, z := range zones {
			for n := range perZone {
				attrs := selector.Map{"region": r, "az": r + z}
				if r+z == "eu-1a" && n == 0 {
					attrs["canary"] = "true"
				}
				out = append(out, waves.Candidate{AgentID: fmt.Sprintf("%s%s-%d", r, z, n), Attributes: attrs})
			}
		}
	}
	return out
}

// assign gives every candidate its wave with core/waves, as a rollout's
// creation does, and turns them into topology targets.
func assign(rolloutID string, s policy.Snapshot, cands []waves.Candidate) []Target {
	plan := waves.Assign(rolloutID, s.Waves, cands)
	attrs := map[string]selector.Attributes{}
	for _, c := range cands {
		attrs[c.AgentID] = c.Attributes
	}
	var out []Target
	for w, ids := range plan.Members {
		for _, id := range ids {
			out = append(out, Target{AgentID: id, Wave: w, Attributes: attrs[id]})
		}
	}
	return out
}

// summary is one line per stage: its name, then each pass as
// name[size/batchSize].
func summary(l Layout) []string {
	var out []string
	for _, st := range l.Stages {
		line := st.Name + " ="
		for _, p := range st.Passes {
			line += fmt.Sprintf(" %s[%d/%d]", p.Name, p.Size, p.BatchSize)
		}
		out = append(out, line)
	}
	return out
}

// checkPlacements checks the invariants of a layout: every target is in
// exactly one pass, at the position its batch says, and the counts add up.
func checkPlacements(t *testing.T, l Layout, targets []Target, placements []Placement) {
	t.Helper()
	if len(placements) != len(targets) {
		t.Fatalf("%d placements for %d targets", len(placements), len(targets))
	}
	seen := map[string]bool{}
	for si, st := range l.Stages {
		for pi, p := range st.Passes {
			if p.Size != len(p.Targets) || p.Batches != ceilDiv(p.Size, p.BatchSize) || p.BatchSize < 1 {
				t.Errorf("pass %s: size %d, %d targets, batch size %d, %d batches", p.Name, p.Size, len(p.Targets), p.BatchSize, p.Batches)
			}
			for pos, id := range p.Targets {
				if seen[id] {
					t.Errorf("%s is in two passes", id)
				}
				seen[id] = true
				i := slices.IndexFunc(targets, func(t Target) bool { return t.AgentID == id })
				if want := (Placement{Stage: si, Pass: pi, Batch: pos / p.BatchSize}); i < 0 || placements[i] != want {
					t.Errorf("%s: placement %v, want %v", id, placements[i], want)
				}
			}
		}
	}
	if len(seen) != len(targets) {
		t.Errorf("%d of %d targets are in a pass", len(seen), len(targets))
	}
}

// The example of the wave-rollout specification: 3 regions × 3 zones, a
// canary, one region zone by zone, then the other two regions together.
func TestCompute_ThreeRegionsThreeZones(t *testing.T) {
	s := snapshot(t, `topology: {regionAttribute: region, zoneAttribute: az}
regions: [eu-1, eu-2, us-1]
maxUnavailable: 25%
waves:
  - {name: canary, selector: "canary=true", bake: 15m, maxUnavailable: 1}
  - {name: eu-1, selector: "region=eu-1, canary!=true", by: az, bake: 10m}
  - {name: rest, percent: 100, by: az, parallelRegions: 2, bake: 10m}`)
	targets := assign("r1", s, fleet([]string{"eu-1", "eu-2", "us-1"}, []string{"a", "b", "c"}, 8))
	l, placements, err := Compute("r1", s, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"canary = canary[1/1]",                                         // one stage named after the wave
		"eu-1/eu-1a = eu-1/eu-1/eu-1a[7/1]",                            // 8 - the canary; 25% of 7 = 1
		"eu-1/eu-1b = eu-1/eu-1/eu-1b[8/2]",                            // 25% of 8 = 2: four batches
		"eu-1/eu-1c = eu-1/eu-1/eu-1c[8/2]",                            //
		"rest/eu-2a+us-1a = rest/eu-2/eu-2a[8/2] rest/us-1/us-1a[8/2]", // zone 1 of two regions together
		"rest/eu-2b+us-1b = rest/eu-2/eu-2b[8/2] rest/us-1/us-1b[8/2]", //
		"rest/eu-2c+us-1c = rest/eu-2/eu-2c[8/2] rest/us-1/us-1c[8/2]", //
	}
	if got := summary(l); !reflect.DeepEqual(got, want) {
		t.Errorf("stages =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := l.Stages[0].Passes[0]; p.Region != "" || p.Targets[0] != "eu-1a-0" {
		t.Errorf("canary pass %+v", p)
	}
	if p := l.Stages[4].Passes[1]; p.Region != "us-1" || p.Zone != "us-1a" || p.Batches != 4 || p.BatchName(3) != "rest/us-1/us-1a#3" {
		t.Errorf("pass %+v", p)
	}
	checkPlacements(t, l, targets, placements)
}

func TestCompute_Stages(t *testing.T) {
	three := fleet([]string{"eu-1", "eu-2", "us-1"}, []string{"a", "b", "c"}, 2)
	tests := []struct {
		name  string
		spec  string
		cands []waves.Candidate
		want  []string
	}{
		{
			name:  "without by: one stage, one pass, one batch", // a policy without the topology fields
			spec:  "waves: [{name: all, percent: 100}]",
			cands: three,
			want:  []string{"all = all[18/18]"},
		},
		{
			name:  "without by, with maxUnavailable: batches in the one pass",
			spec:  "waves: [{name: all, percent: 100, maxUnavailable: 5}]",
			cands: three,
			want:  []string{"all = all[18/5]"},
		},
		{
			name:  "the implicit rest wave takes the rollout's maxUnavailable",
			spec:  "maxUnavailable: 50%\nwaves: [{name: canary, selector: 'canary=true'}]",
			cands: three,
			want:  []string{"canary = canary[1/1]", "rest = rest[17/8]"},
		},
		{
			name:  "by region: one pass per region, one region per stage",
			spec:  "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: w, percent: 100, by: region}]",
			cands: three,
			want:  []string{"w/eu-1 = w/eu-1[6/1]", "w/eu-2 = w/eu-2[6/1]", "w/us-1 = w/us-1[6/1]"},
		},
		{
			name:  "by region, parallelRegions 2, regions order first, others alphabetically",
			spec:  "topology: {regionAttribute: region, zoneAttribute: az}\nregions: [us-1, ap-9]\nwaves: [{name: w, percent: 100, by: region, parallelRegions: 2, maxUnavailable: 100%}]",
			cands: three,
			want:  []string{"w/us-1+eu-1 = w/us-1[6/6] w/eu-1[6/6]", "w/eu-2 = w/eu-2[6/6]"}, // ap-9 has no agents
		},
		{
			name:  "by zone, parallelRegions 2 of 3 regions: the third region alone after",
			spec:  "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: w, percent: 100, by: zone, parallelRegions: 2}]",
			cands: three,
			want: []string{
				"w/eu-1a+eu-2a = w/eu-1/eu-1a[2/1] w/eu-2/eu-2a[2/1]",
				"w/eu-1b+eu-2b = w/eu-1/eu-1b[2/1] w/eu-2/eu-2b[2/1]",
				"w/eu-1c+eu-2c = w/eu-1/eu-1c[2/1] w/eu-2/eu-2c[2/1]",
				"w/us-1a = w/us-1/us-1a[2/1]",
				"w/us-1b = w/us-1/us-1b[2/1]",
				"w/us-1c = w/us-1/us-1c[2/1]",
			},
		},
		{
			name:  "by zone: a region with fewer zones sits the later stages out",
			spec:  "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: w, percent: 100, by: zone, parallelRegions: 3}]",
			cands: append(fleet([]string{"eu-1"}, []string{"a", "b"}, 1), fleet([]string{"us-1"}, []string{"a"}, 1)...),
			want:  []string{"w/eu-1a+us-1a = w/eu-1/eu-1a[1/1] w/us-1/us-1a[1/1]", "w/eu-1b = w/eu-1/eu-1b[1/1]"},
		},
		{
			name: "by zone: zone names repeated across regions name the region in the stage",
			spec: "topology: {regionAttribute: region, zoneAttribute: zone}\nwaves: [{name: w, percent: 100, by: zone, parallelRegions: 2}]",
			cands: []waves.Candidate{
				{AgentID: "a", Attributes: selector.Map{"region": "westeurope", "zone": "1"}},
				{AgentID: "b", Attributes: selector.Map{"region": "eastus", "zone": "1"}},
			},
			want: []string{"w/eastus/1+westeurope/1 = w/eastus/1[1/1] w/westeurope/1[1/1]"},
		},
		{
			name: "default attributes: cloud.region and cloud.availability_zone",
			spec: "waves: [{name: w, percent: 100, by: zone, maxUnavailable: 2}]",
			cands: []waves.Candidate{
				{AgentID: "a", Attributes: selector.Map{"cloud.region": "eu-west-1", "cloud.availability_zone": "eu-west-1b"}},
				{AgentID: "b", Attributes: selector.Map{"cloud.region": "eu-west-1", "cloud.availability_zone": "eu-west-1a"}},
			},
			want: []string{"w/eu-west-1a = w/eu-west-1/eu-west-1a[1/2]", "w/eu-west-1b = w/eu-west-1/eu-west-1b[1/2]"},
		},
		{
			name:  "percentage batches: 25% of 5 = 1, of 8 = 2",
			spec:  "topology: {regionAttribute: region, zoneAttribute: az}\nmaxUnavailable: 25%\nwaves: [{name: w, percent: 100, by: region}]",
			cands: append(fleet([]string{"eu-1"}, []string{"a"}, 5), fleet([]string{"eu-2"}, []string{"a", "b"}, 4)...),
			want:  []string{"w/eu-1 = w/eu-1[5/1]", "w/eu-2 = w/eu-2[8/2]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot(t, tt.spec)
			targets := assign("r1", s, tt.cands)
			l, placements, err := Compute("r1", s, targets)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(l); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stages =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			checkPlacements(t, l, targets, placements)
		})
	}
}

// Agents of a wave with by that lack the region or zone are an error, never
// dropped; waves without by do not need the attributes.
func TestCompute_MissingAttributes(t *testing.T) {
	s := snapshot(t, "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: canary, selector: 'canary=true'}, {name: w, percent: 100, by: zone}]")
	targets := []Target{
		{AgentID: "canary", Wave: 0, Attributes: selector.Map{"canary": "true"}}, // no region: fine without by
		{AgentID: "ok", Wave: 1, Attributes: selector.Map{"region": "eu-1", "az": "eu-1a"}},
		{AgentID: "no-zone", Wave: 1, Attributes: selector.Map{"region": "eu-1"}},
		{AgentID: "empty-region", Wave: 1, Attributes: selector.Map{"region": "", "az": "eu-1a"}},
		{AgentID: "nil", Wave: 1},
	}
	for i := range 6 {
		targets = append(targets, Target{AgentID: fmt.Sprintf("z%d", i), Wave: 1, Attributes: selector.Map{}})
	}
	_, _, err := Compute("r1", s, targets)
	var missing *MissingAttributeError
	if !errors.As(err, &missing) {
		t.Fatalf("error %v, want a *MissingAttributeError", err)
	}
	want := &MissingAttributeError{Wave: "w", By: policy.SplitZone, Attributes: []string{"region", "az"}, Count: 9, Of: 10,
		Sample: []string{"empty-region", "nil", "no-zone", "z0", "z1"}}
	if !reflect.DeepEqual(missing, want) {
		t.Errorf("error = %#v, want %#v", missing, want)
	}
	if msg := err.Error(); msg != `wave "w" is split by zone, but 9 of its 10 agents lack region or az: empty-region, nil, no-zone, z0, z1 and 4 more` {
		t.Errorf("message %q", msg)
	}
}

func TestCompute_MissingAttributesInTwoWaves(t *testing.T) {
	s := snapshot(t, "waves: [{name: a, selector: 'x=1', by: region}, {name: b, percent: 100, by: region}]")
	_, _, err := Compute("r1", s, []Target{{AgentID: "1", Wave: 0}, {AgentID: "2", Wave: 1}})
	for _, wave := range []string{`wave "a"`, `wave "b"`} {
		if err == nil || !strings.Contains(err.Error(), wave) {
			t.Errorf("error %v does not name %s", err, wave)
		}
	}
}

func TestCompute_InvalidTargets(t *testing.T) {
	s := snapshot(t, "waves: [{name: a, percent: 50}]") // waves a and the implicit rest: 0 and 1
	tests := []struct {
		name    string
		targets []Target
		want    string
	}{
		{name: "wave out of range", targets: []Target{{AgentID: "x", Wave: 2}}, want: "target x is in wave 2, but the rollout has waves 0 to 1"},
		{name: "negative wave", targets: []Target{{AgentID: "x", Wave: -1}}, want: "in wave -1"},
		{name: "repeated agent", targets: []Target{{AgentID: "x"}, {AgentID: "x", Wave: 1}}, want: "1 agent IDs are repeated"},
	}
	for _, tt := range tests {
		if _, _, err := Compute("r1", s, tt.targets); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want ...%s...", tt.name, err, tt.want)
		}
	}
}

// The layout depends on the rollout and the targets, not on their order.
func TestCompute_IndependentOfOrder(t *testing.T) {
	s := snapshot(t, "topology: {regionAttribute: region, zoneAttribute: az}\nmaxUnavailable: 2\nwaves: [{name: w, percent: 100, by: zone, parallelRegions: 2}]")
	targets := assign("r1", s, fleet([]string{"eu-1", "eu-2", "us-1"}, []string{"a", "b"}, 5))
	l1, p1, err1 := Compute("r1", s, targets)
	reversed := slices.Clone(targets)
	slices.Reverse(reversed)
	l2, p2, err2 := Compute("r1", s, reversed)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(l1, l2) {
		t.Fatalf("layouts differ: %v %v", err1, err2)
	}
	for i := range targets {
		if p1[i] != p2[len(targets)-1-i] {
			t.Errorf("%s placed at %v and %v", targets[i].AgentID, p1[i], p2[len(targets)-1-i])
		}
	}
	if l3, _, _ := Compute("r2", s, targets); reflect.DeepEqual(l1.Stages[0].Passes[0].Targets, l3.Stages[0].Passes[0].Targets) {
		t.Error("another rollout should order the pass differently")
	}
}

func TestAddStragglers(t *testing.T) {
	s := snapshot(t, "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: w, percent: 100, by: zone, maxUnavailable: 2}]")
	targets := assign("r1", s, fleet([]string{"eu-1"}, []string{"a", "b"}, 3))
	l, _, err := Compute("r1", s, targets)
	if err != nil {
		t.Fatal(err)
	}
	before := summary(l)
	got, placements := AddStragglers(s, l, 0, []string{"s1", "s2", "s3"})
	if !reflect.DeepEqual(summary(l), before) || len(l.Stages[1].Passes[0].Targets) != 3 {
		t.Error("AddStragglers changed the layout it was given")
	}
	p := got.Stages[1].Passes[0] // the last pass of the last stage: w/eu-1/eu-1b, 3 targets in batches 0, 0, 1
	if p.Size != 6 || p.Batches != 4 || !slices.Equal(p.Targets[3:], []string{"s1", "s2", "s3"}) {
		t.Errorf("last pass %+v", p)
	}
	want := []Placement{{Stage: 1, Pass: 0, Batch: 2}, {Stage: 1, Pass: 0, Batch: 2}, {Stage: 1, Pass: 0, Batch: 3}} // new batches after the pass's own
	if !reflect.DeepEqual(placements, want) {
		t.Errorf("placements %v, want %v", placements, want)
	}
	if same, none := AddStragglers(s, l, 0, nil); !reflect.DeepEqual(same, l) || none != nil {
		t.Error("no stragglers must change nothing")
	}
}

// When the last wave had no targets, its stage does not exist yet: the
// stragglers make it, as the engine reruns the skipped last wave.
func TestAddStragglers_SkippedLastWave(t *testing.T) {
	s := snapshot(t, "maxUnavailable: 50%\nwaves: [{name: canary, selector: 'canary=true'}]") // canary, then the implicit rest
	targets := []Target{{AgentID: "c", Wave: 0, Attributes: selector.Map{"canary": "true"}}}
	l, _, err := Compute("r1", s, targets)
	if err != nil {
		t.Fatal(err)
	}
	got, placements := AddStragglers(s, l, 1, []string{"s1", "s2", "s3", "s4"})
	if want := []string{"canary = canary[1/1]", "rest = rest[4/2]"}; !reflect.DeepEqual(summary(got), want) {
		t.Errorf("stages %v, want %v", summary(got), want)
	}
	if want := []Placement{{Stage: 1, Batch: 0}, {Stage: 1, Batch: 0}, {Stage: 1, Batch: 1}, {Stage: 1, Batch: 1}}; !reflect.DeepEqual(placements, want) {
		t.Errorf("placements %v, want %v", placements, want)
	}
	if empty, p := AddStragglers(s, Layout{}, 1, []string{"s1"}); len(empty.Stages) != 1 || p[0] != (Placement{}) {
		t.Errorf("stragglers of an empty layout: %v %v", summary(empty), p)
	}
}

// The stored layout names no agent: the targets keep their placements.
func TestLayout_JSON(t *testing.T) {
	s := snapshot(t, "topology: {regionAttribute: region, zoneAttribute: az}\nwaves: [{name: w, percent: 100, by: zone}]")
	l, placements, err := Compute("r1", s, assign("r1", s, fleet([]string{"eu-1"}, []string{"a"}, 2)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stages":[{"name":"w/eu-1a","wave":0,"passes":[{"name":"w/eu-1/eu-1a","region":"eu-1","zone":"eu-1a","size":2,"batchSize":1,"batches":2}]}]}`
	if string(data) != want {
		t.Errorf("JSON %s\nwant %s", data, want)
	}
	if data, _ := json.Marshal(placements[0]); !strings.HasPrefix(string(data), `{"stage":0,"pass":0,"batch":`) {
		t.Errorf("placement JSON %s", data)
	}
}
