package store

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/rollout"
)

// goodRollout is a rollout item as the store writes it.
func goodRollout(t *testing.T) item {
	r, _ := newRollout("r-123", 0, 1, t0)
	it, err := encodeRollout(r, 1)
	must(t, err)
	return it
}

func without(it item, name string) item {
	out := item{}
	for k, v := range it {
		if k != name {
			out[k] = v
		}
	}
	return out
}

func with(it item, name string, v types.AttributeValue) item {
	out := without(it, name)
	out[name] = v
	return out
}

// Items that do not decode give an error naming the item, never a panic
// and never a zero value (no DynamoDB needed).
func TestDecode_ErrorsNameTheItem(t *testing.T) {
	good := goodRollout(t)
	tests := []struct {
		name string
		item item
		want string
	}{
		{name: "missing status", item: without(good, attrStatus), want: `decode rollout r-123: attribute "status" missing`},
		{name: "status of a wrong type", item: with(good, attrStatus, num(3)), want: `decode rollout r-123: attribute "status" is N, want S`},
		{name: "future schema", item: with(good, attrSV, num(SchemaVersion+1)), want: `decode rollout r-123: schema version 4 is newer than this build understands (3)`},
		{name: "no schema", item: without(good, attrSV), want: `decode rollout r-123: attribute "sv" missing`},
		{name: "version not a number", item: with(good, attrV, &types.AttributeValueMemberN{Value: "x"}), want: `decode rollout r-123: attribute "v" is "x", want an integer`},
		{name: "document not JSON", item: with(good, attrDoc, str("{")), want: `decode rollout r-123: attribute "doc": unexpected end of JSON input`},
		{name: "document of a wrong shape", item: with(good, attrDoc, str(`{"waves":"all"}`)), want: `decode rollout r-123: attribute "doc": json: cannot unmarshal string into Go struct field Rollout.waves of type []rollout.Wave`},
		{name: "missing key", item: without(good, tables.AttrID), want: `decode rollout (no id): attribute "id" missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeRollout(tt.item)
			var de *DecodeError
			if !errors.As(err, &de) || err.Error() != tt.want {
				t.Fatalf("error %v\nwant %s", err, tt.want)
			}
		})
	}
	if r, err := decodeRollout(good); err != nil || r.ID != "r-123" || r.Status != rollout.Pending || r.Version != 1 {
		t.Fatalf("good item: %+v %v", r, err)
	}
}

// Bad items read through the store: each reader names the item's key.
func TestDecode_ThroughTheStore(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	put := func(table string, it item) {
		t.Helper()
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it})
		must(t, err)
	}
	put(s.names.Rollouts, without(goodRollout(t), attrStatus))
	r, ts := newRollout("r-ok", 2, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	tit, err := encodeTarget(r, ts[1], 2)
	must(t, err)
	put(s.names.Targets, with(tit, attrV, str("2")))
	ait, err := encodeAgent(AgentRecord{Agent: agentOf("a-bad", "edge")}, 1)
	must(t, err)
	put(s.names.Agents, with(ait, attrSV, num(7)))
	put(s.names.Objects, newItem().s(tables.AttrPK, pkSelection).s(tables.AttrSK, "edge").s(attrDoc, "{}"))

	checks := []struct {
		name string
		err  func() error
		want string
	}{
		{name: "rollout", err: func() error { _, err := s.GetRollout(ctx, "r-123"); return err }, want: `decode rollout r-123: attribute "status" missing`},
		{name: "target", err: func() error { _, _, err := s.LoadRollout(ctx, "r-ok"); return err }, want: `decode target r-ok 00000#a00001: attribute "v" is S, want N`},
		{name: "agent", err: func() error { _, _, err := s.GetAgent(ctx, "a-bad"); return err }, want: `decode agent a-bad: schema version 7 is newer than this build understands (3)`},
		{name: "agent in a listing", err: func() error { _, err := s.AgentsOfFleet(ctx, "edge", "", 0); return err }, want: `decode agent a-bad: schema version 7 is newer than this build understands (3)`},
		{name: "rollout in a listing", err: func() error { _, err := s.RolloutsPage(ctx, "", "", "", 0); return err }, want: `decode rollout r-123: attribute "status" missing`},
		{name: "selection", err: func() error { _, err := s.Selection(ctx, "edge"); return err }, want: `decode selection edge: attribute "rev" missing`},
	}
	for _, c := range checks {
		if err := c.err(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
}

func TestPageToken_RoundTripAndRefusal(t *testing.T) {
	key := map[string]types.AttributeValue{"rolloutId": str("r1"), "waveAgent": str("00001#a7")}
	got, err := decodeToken(encodeToken(key))
	if err != nil || len(got) != 2 || got["waveAgent"].(*types.AttributeValueMemberS).Value != "00001#a7" {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range []string{"%%%", "e30", "bm90IGpzb24"} { // not base64, {}, "not json"
		if _, err := decodeToken(bad); !errors.Is(err, page.ErrBadToken) {
			t.Errorf("token %q: %v, want page.ErrBadToken", bad, err)
		}
	}
	if encodeToken(nil) != "" {
		t.Error("the last page has no token")
	}
}

func TestTableDefinitions(t *testing.T) {
	defs := TableDefinitions("x-")
	if len(defs) != len(tables.All()) {
		t.Fatalf("%d definitions for %d tables", len(defs), len(tables.All()))
	}
	for _, d := range defs {
		if len(*d.TableName) < 3 || (*d.TableName)[:2] != "x-" || d.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("table %s: prefix or billing", *d.TableName)
		}
		declared := map[string]bool{}
		for _, a := range d.AttributeDefinitions {
			declared[*a.AttributeName] = true
		}
		keys := append([]types.KeySchemaElement(nil), d.KeySchema...)
		for _, g := range d.GlobalSecondaryIndexes {
			keys = append(keys, g.KeySchema...)
		}
		for _, k := range keys {
			if !declared[*k.AttributeName] {
				t.Errorf("table %s: key attribute %s not declared", *d.TableName, *k.AttributeName)
			}
		}
		if len(declared) != len(uniqueNames(keys)) {
			t.Errorf("table %s declares attributes that are no key: DynamoDB refuses that", *d.TableName)
		}
		var view types.StreamViewType
		if d.StreamSpecification != nil {
			view = d.StreamSpecification.StreamViewType
		}
		// New images only: an agent write stamps what it changed (written.go).
		want := map[string]types.StreamViewType{"x-agents": types.StreamViewTypeNewImage, "x-events": types.StreamViewTypeNewImage}[*d.TableName]
		if view != want {
			t.Errorf("table %s: stream %q, want %q", *d.TableName, view, want)
		}
	}
}

func uniqueNames(ks []types.KeySchemaElement) map[string]bool {
	out := map[string]bool{}
	for _, k := range ks {
		out[*k.AttributeName] = true
	}
	return out
}

// The agent's capabilities survive the codec; an item without them (written
// before they were stored) decodes as unknown, which counts as reporting health.
func TestAgentCodec_Capabilities(t *testing.T) {
	for _, caps := range []uint64{0, 0x1 | 0x2, 0x1 | 0x2 | agent.CapabilityReportsHealth} {
		it, err := encodeAgent(AgentRecord{Agent: agent.Agent{ID: "a1", Capabilities: caps}}, 1)
		must(t, err)
		r, err := decodeAgent(it)
		must(t, err)
		if r.Capabilities != caps {
			t.Errorf("capabilities %#x after the codec, want %#x", r.Capabilities, caps)
		}
		if want := caps == 0 || caps&agent.CapabilityReportsHealth != 0; r.ReportsHealth() != want {
			t.Errorf("capabilities %#x: reports health %v, want %v", caps, r.ReportsHealth(), want)
		}
	}
}
