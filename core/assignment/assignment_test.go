package assignment

import (
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/selector"
)

func fleetOf(name, hash string, match map[string]string) fleet.Fleet {
	return fleet.Fleet{Name: name, Selector: selector.Selector{MatchAttributes: match}, Config: fleet.Config{Hash: hash}}
}

func TestDecide(t *testing.T) {
	fleets := []fleet.Fleet{
		fleetOf("all", "h-all", nil), // catch-all: takes what no other fleet takes
		fleetOf("edge", "h-edge", map[string]string{"labels.fleet": "edge"}),
		fleetOf("edge-eu", "h-eu", map[string]string{"labels.fleet": "edge", "cloud.region": "eu-west-1"}),
		fleetOf("blue", "h-blue", map[string]string{"labels.color": "blue"}),
	}
	cases := []struct {
		name    string
		attrs   map[string]string
		desired string
		want    Outcome
	}{
		{name: "only the catch-all", attrs: map[string]string{"host.name": "x"}, want: Outcome{Fleet: "all", Bootstrap: "h-all"}},
		{name: "one selector", attrs: map[string]string{"labels.fleet": "edge"}, want: Outcome{Fleet: "edge", Bootstrap: "h-edge"}},
		{name: "the most specific wins", attrs: map[string]string{"labels.fleet": "edge", "cloud.region": "eu-west-1"}, want: Outcome{Fleet: "edge-eu", Bootstrap: "h-eu"}},
		{name: "equally specific: an error, no fleet", attrs: map[string]string{"labels.fleet": "edge", "labels.color": "blue"},
			want: Outcome{Error: "the agent matches several fleets: [blue edge]"}},
		{name: "a desired hash is kept (moved agent)", attrs: map[string]string{"labels.fleet": "edge"}, desired: "h-old", want: Outcome{Fleet: "edge"}},
		{name: "a myriarch-updater: no fleet, not even the catch-all", attrs: map[string]string{"labels.fleet": "edge",
			agent.AttrLinkedCollector: "018f3a10-2233-7444-8555-000000000001"}, want: Outcome{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(fleets, agent.Agent{ID: "a", Attributes: c.attrs, DesiredHash: c.desired})
			if got != c.want {
				t.Fatalf("Decide = %+v, want %+v", got, c.want)
			}
		})
	}
	if got := Decide(nil, agent.Agent{ID: "a", Attributes: map[string]string{"labels.fleet": "edge"}}); got != (Outcome{}) {
		t.Fatalf("no revision applied: %+v, want unassigned", got)
	}
}

func TestOutcomeApply(t *testing.T) {
	a := agent.Agent{ID: "a", Fleet: "edge", AssignmentError: "old", DesiredHash: "h1"}
	if !(Outcome{Fleet: "lab", Bootstrap: "h-lab"}).Apply(&a) || a.Fleet != "lab" || a.AssignmentError != "" || a.DesiredHash != "h1" {
		t.Fatalf("applied: %+v, want fleet lab, no error, the desired hash kept", a)
	}
	if (Outcome{Fleet: "lab", Bootstrap: "h-lab"}).Apply(&a) {
		t.Fatal("applying the same outcome again changed the agent")
	}
	b := agent.Agent{ID: "b"}
	if !(Outcome{Fleet: "lab", Bootstrap: "h-lab"}).Apply(&b) || b.DesiredHash != "h-lab" {
		t.Fatalf("bootstrap: %+v, want desired hash h-lab", b)
	}
}
