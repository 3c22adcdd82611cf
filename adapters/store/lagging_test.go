package store

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
)

// A lagging agent's item copies its desired state into the attributes the
// lagging index projects, a configuration hash as its 32 bytes; an agent
// that does not lag carries none of them. Every write stamps fv: its own
// counter, except a write of the desired state alone, which keeps it.
func TestEncodeAgent_LaggingCopiesTheDesiredState(t *testing.T) {
	r := sampleRecord()
	r.Push.AckedHash = ""
	r.DesiredHash, r.PackageOffer = hexHash("next"), "otelcol-contrib@0.162.0"
	it, err := encodeAgent(r, 8)
	must(t, err)
	if b, ok := it[tables.AttrLagHash].(*types.AttributeValueMemberB); !ok || len(b.Value) != 32 {
		t.Errorf("lh = %#v, want the hash's 32 bytes", it[tables.AttrLagHash])
	}
	for name, want := range map[string]string{tables.AttrLagOffer: r.PackageOffer, tables.AttrLagTargetVer: r.TargetVersion, tables.AttrFactsV: "8"} {
		if got := attrText(it[name]); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	a, l, err := decodeLagging(projected(it))
	must(t, err)
	if want := (agent.Agent{ID: r.ID, DesiredHash: r.DesiredHash, PackageOffer: r.PackageOffer, TargetVersion: r.TargetVersion}); !reflect.DeepEqual(a, want) {
		t.Errorf("listed %+v, want %+v", a, want)
	}
	if l.version != 8 || l.factsVersion != 8 {
		t.Errorf("listed version %d facts %d, want 8 and 8", l.version, l.factsVersion)
	}

	r.desiredOnly, r.FactsVersion = true, 5
	it, err = encodeAgent(r, 9)
	must(t, err)
	if got := attrText(it[tables.AttrFactsV]); got != "5" {
		t.Errorf("a write of the desired state alone stamped fv %s, want the 5 it read", got)
	}
	got, err := decodeAgent(it)
	must(t, err)
	if got.FactsVersion != 5 {
		t.Errorf("read back FactsVersion %d, want 5", got.FactsVersion)
	}

	r = sampleRecord() // delivered: not lagging
	it, err = encodeAgent(r, 3)
	must(t, err)
	for _, name := range []string{tables.AttrLag, tables.AttrLagHash, tables.AttrLagOffer, tables.AttrLagTargetVer} {
		if _, ok := it[name]; ok {
			t.Errorf("an agent that does not lag has %s", name)
		}
	}
}

// A hash that is not lower-case hex sha256 is kept as it is.
func TestHashValue_RoundTrips(t *testing.T) {
	for _, h := range []string{hexHash("x"), "h1", "ABCDEF" + hexHash("y")[6:], hexHash("z")[:62] + "zz"} {
		v := hashValue(h)
		d := &decoder{item: "test"}
		if got := d.hash("lh", v); got != h || d.err != nil {
			t.Errorf("%q read back as %q (%v)", h, got, d.err)
		}
		if _, bin := v.(*types.AttributeValueMemberB); bin != (h == hexHash("x")) {
			t.Errorf("%q stored as %T", h, v)
		}
	}
	d := &decoder{item: "test"}
	if d.hash("lh", &types.AttributeValueMemberB{Value: []byte{1, 2}}); d.err == nil {
		t.Error("a hash of 2 bytes read without an error")
	}
}

// A lagging entry is the keys and the projected attributes: a quarter of the
// agent's item at most, since the gateway reads each lagging agent about
// three times in a wave.
func TestLaggingEntry_IsAQuarterOfTheItem(t *testing.T) {
	r := sampleRecord()
	r.Push.AckedHash, r.DesiredHash = "", hexHash("next")
	it, err := encodeAgent(r, 8)
	must(t, err)
	entry, whole := usage.ItemSize(projected(it)), usage.ItemSize(it)
	if entry*4 > whole {
		t.Errorf("lagging entry %d B, item %d B: want a quarter or less", entry, whole)
	}
	t.Logf("lagging entry %d B, item %d B", entry, whole)
}

// projected is what the lagging index holds of an item.
func projected(it item) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for _, name := range append([]string{tables.AttrID, tables.AttrLag}, tables.LagNonKeyAttributes...) {
		if v, ok := it[name]; ok {
			out[name] = v
		}
	}
	return out
}

func attrText(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return ""
}

// listedVersion is the one agent the lagging index lists, with its version.
func listedVersion(t *testing.T, s *Store, id string) (agent.Agent, *ListedVersion) {
	t.Helper()
	page, versions, _, err := s.LaggingAgents(ctxT(t), "", 100)
	must(t, err)
	for i, a := range page {
		if a.ID == id {
			return a, versions[i].(*ListedVersion)
		}
	}
	t.Fatalf("agent %s is not lagging", id)
	return agent.Agent{}, nil
}

// A gateway session writes its agent's next report over a listed desired
// state without reading the agent, when nothing but the desired state was
// written since the session's own version: by the planner (SetDesiredHash)
// or by an evaluation over its own read (SetDesiredHashOver). When anything
// else was written meanwhile (here the agent's fleet), the listing cannot
// stand for the item, and the session's write reads the agent first.
func TestListedVersion_OverTheSessionsVersionOnlyWhenOnlyTheDesiredStateChanged(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge"))
	a, _, v, err := s.LoadAgent(ctx, "a1")
	must(t, err)

	must(t, s.SetDesiredHash(ctx, []string{"a1"}, hexHash("h1")))
	listedA, listed := listedVersion(t, s, "a1")
	if listedA.DesiredHash != hexHash("h1") || listedA.Attributes != nil || listedA.Online {
		t.Fatalf("listed %+v", listedA)
	}
	over, ok := listed.Over(v)
	if !ok {
		t.Fatal("a desired hash set over the session's version: the listing does not stand for the item")
	}
	a.RemoteConfig = agent.RemoteConfigStatus{Hash: hexHash("h1"), Status: agent.ConfigApplied, Since: t0}
	s.ResetUsage()
	v, err = s.SaveAgent(ctx, a, over)
	must(t, err)
	if u := s.Usage(); u.ItemsRead != 0 || u.ItemsWritten != 1 {
		t.Errorf("the report over the listed version: usage %s, want one write and no read", u)
	}
	stored, err := s.GetAgentRecord(ctx, "a1")
	must(t, err)
	if stored.DesiredHash != hexHash("h1") || stored.RemoteConfig.Hash != hexHash("h1") || stored.Fleet != "edge" || stored.FactsVersion != stored.Version {
		t.Fatalf("stored %+v", stored)
	}

	// an evaluation's desired hash over its own read keeps fv too
	agents, read, err := s.AgentsForEvaluation(ctx, []string{"a1"}, nil)
	must(t, err)
	must(t, s.SetDesiredHashOver(ctx, []string{"a1"}, hexHash("h2"), agents, read))
	_, listed = listedVersion(t, s, "a1")
	if _, ok := listed.Over(v); !ok {
		t.Error("a desired hash set by an evaluation over its read: the listing does not stand for the item")
	}

	// anything else written meanwhile: no
	_, _, _, err = s.AssignAgent(ctx, "a1", 0, func(agent.Agent) assignment.Outcome { return assignment.Outcome{Fleet: "core"} })
	must(t, err)
	must(t, s.SetDesiredHash(ctx, []string{"a1"}, hexHash("h3")))
	_, listed = listedVersion(t, s, "a1")
	if _, ok := listed.Over(v); ok {
		t.Fatal("the fleet changed since the session's version, and the listing still stands for the item")
	}
	if _, ok := listed.Over(nil); ok {
		t.Fatal("a listing stands for an unknown version")
	}
	// the session's write, over its old version, reads and merges: the fleet stays
	_, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	if stored, err = s.GetAgentRecord(ctx, "a1"); err != nil || stored.Fleet != "core" || stored.DesiredHash != hexHash("h3") {
		t.Fatalf("after the merge: %+v %v", stored, err)
	}
}

// An agent item that a build before this layout wrote while the agent
// lagged (its lag key, no copy of the desired state, no fv) is listed
// whole, read from the table, with the version of a read: the gateway must
// not take an empty desired state from it.
func TestLaggingAgents_OlderItemsListedWhole(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r := sampleRecord()
	r.ID, r.Push.AckedHash, r.DesiredHash = "older", "", hexHash("next")
	it := schema2Item(t, r, 4)
	it.s(tables.AttrLag, lagShard(r.ID))
	must(t, s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Agents, Item: it}))
	seed(t, s, agentOf("newer", "edge"))
	must(t, s.SetDesiredHash(ctx, []string{"newer"}, hexHash("next")))

	page, versions, _, err := s.LaggingAgents(ctx, "", 10)
	must(t, err)
	if len(page) != 2 {
		t.Fatalf("%d listed, want 2", len(page))
	}
	for i, a := range page {
		switch a.ID {
		case "older":
			v, ok := versions[i].(*AgentVersion)
			if !ok || v.version != 4 || a.DesiredHash != r.DesiredHash || a.Attributes["host.name"] != "sim-47" {
				t.Errorf("older item listed as %+v at %#v, want the whole agent at version 4", a, versions[i])
			}
		case "newer":
			if _, ok := versions[i].(*ListedVersion); !ok || a.DesiredHash != hexHash("next") {
				t.Errorf("newer item listed as %+v at %#v", a, versions[i])
			}
		}
	}
}
