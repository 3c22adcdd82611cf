package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// Items written with a dictionary are read with it for as long as they
// live: a changed dictionary would make every stored agent undecodable.
func TestPackDictionaries_NeverChange(t *testing.T) {
	want := map[byte]string{
		dictAgent1:  "7ca9c6e4d9d3bd183d72d2a2b72b329bbce9d6b8706d3ee64716b26792f1fb32",
		dictTarget1: "937765d51c7cd80cea4b9c1eb9dc9e5eb570625d12ca7ba60ff1bbeba8e73c35",
		dictAgent2:  "51865136098c7e55c2b9382a4072741cc4a2aa6784402e978b2964a05ad317cf",
	}
	for id, dict := range packDictionaries {
		sum := sha256.Sum256(dict)
		if got := hex.EncodeToString(sum[:]); got != want[id] {
			t.Errorf("dictionary %d has digest %s, want %s: a dictionary that shipped never changes; add a new id instead", id, got, want[id])
		}
	}
	if len(packDictionaries) != len(want) {
		t.Errorf("%d dictionaries, %d digests: give a new dictionary its digest here", len(packDictionaries), len(want))
	}
}

func sampleAgent() agent.Agent {
	at := time.Date(2026, 12, 5, 13, 25, 26, 156856535, time.UTC)
	h := hexHash("config") // a configuration hash is random hex
	return agent.Agent{ID: "d3d37462-8bac-50b7-9612-f5aaaaf4f3b0", Fleet: "edge",
		Attributes: map[string]string{"host.arch": "amd64", "host.name": "sim-47", "labels.fleet": "edge", "os.type": "linux",
			"service.instance.id": "d3d37462-8bac-50b7-9612-f5aaaaf4f3b0", "service.name": "otelcol-contrib",
			"service.version": "0.161.0", "site.timezone": "Asia/Tokyo"},
		Online: true, LastSeen: at, ConnectedAt: at.Add(-9 * time.Second), Task: "gw-7ee1cbcd46177778", Capabilities: 14623,
		Health:        agent.Health{Healthy: true, Status: "StatusOK", StartTime: at, ReportedAt: at},
		RemoteConfig:  agent.RemoteConfigStatus{Hash: h, Status: agent.ConfigApplied, Since: at},
		EffectiveHash: h, ServiceVersion: "0.161.0", VersionSince: at,
		Package:     agent.PackageStatus{Version: "0.161.0", Status: "INSTALLED", Since: at},
		DesiredHash: h, TargetVersion: "0.161.0"}
}

// An agent's item is a third of what it was with its readable document,
// and reads back as the same agent.
func TestEncodeAgent_PackedReadsBackAndIsSmall(t *testing.T) {
	a := sampleAgent()
	it, err := encodeAgent(AgentRecord{Agent: a, Push: Push{AckedHash: a.DesiredHash}}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := it[attrDoc]; ok {
		t.Fatal("an agent item carries the readable document too")
	}
	got, err := decodeAgent(it)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(utcAgent(a))
	jg, _ := json.Marshal(got.Agent)
	if !bytes.Equal(ja, jg) || got.Version != 7 || got.Push.AckedHash != a.DesiredHash {
		t.Fatalf("read back %s v%d, want %s v7", jg, got.Version, ja)
	}
	readable, _ := newItem().doc(utcAgent(a))
	packed, plain := usage.ItemSize(map[string]types.AttributeValue{attrPacked: it[attrPacked]}), usage.ItemSize(readable)
	if packed*3 > plain {
		t.Errorf("packed document %d B, readable %d B: want a third or less", packed, plain)
	}
	t.Logf("agent document: readable %d B, packed %d B; whole item %d B", plain, packed, usage.ItemSize(it))
}

// A target's item reads back as the same target, packed smaller.
func TestEncodeTarget_PackedReadsBack(t *testing.T) {
	at := time.Date(2026, 12, 5, 13, 25, 26, 0, time.UTC)
	r := rollout.Rollout{ID: "r-20261205t132525-1960613b", Kind: "config", CreatedAt: at}
	tg := rollout.Target{RolloutID: r.ID, AgentID: "08d43fbf-fd1a-543e-afcc-36c3bbfe01ce", Status: rollout.TargetSucceeded,
		Attempt: 1, FromRef: hexHash("from"), ToRef: hexHash("to"), StartedAt: &at, VerifiedAt: &at, FinishedAt: &at}
	it, err := encodeTarget(r, tg, 4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeTarget(it)
	if err != nil {
		t.Fatal(err)
	}
	tg.Version = 4
	jw, _ := json.Marshal(tg)
	jg, _ := json.Marshal(got)
	if !bytes.Equal(jw, jg) {
		t.Fatalf("read back %s, want %s", jg, jw)
	}
	readable, _ := newItem().doc(tg)
	if p, d := usage.ItemSize(map[string]types.AttributeValue{attrPacked: it[attrPacked]}), usage.ItemSize(readable); p >= d*3/4 {
		t.Errorf("packed document %d B, readable %d B: want under three quarters", p, d)
	}
	// Schema 3: what the item's attributes hold, the document does not
	// spell again.
	doc, err := unpack(nil, it[attrPacked].(*types.AttributeValueMemberB).Value)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tg.AgentID, r.ID, string(tg.Status)} {
		if strings.Contains(string(doc), s) {
			t.Errorf("the packed document repeats %q, an attribute of the item: %s", s, doc)
		}
	}
}

// Items of schema 1 (a readable document) still read; a packed attribute
// that is not one of ours is a decode error, never a panic.
func TestDecode_ReadableAndBadPackedDocuments(t *testing.T) {
	a := sampleAgent()
	it, err := encodeAgent(AgentRecord{Agent: a}, 3)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]types.AttributeValue{}
	for k, v := range it {
		old[k] = v
	}
	delete(old, attrPacked)
	old[attrSV] = num(1)
	doc, _ := newItem().doc(utcAgent(a))
	old[attrDoc] = doc[attrDoc]
	if got, err := decodeAgent(old); err != nil || got.Agent.RemoteConfig.Hash != a.RemoteConfig.Hash {
		t.Fatalf("schema-1 item: %+v %v", got.Agent.RemoteConfig, err)
	}
	for name, p := range map[string][]byte{
		"empty": {}, "unknown dictionary": {99, 1, 2}, "not deflate": {dictAgent1, 0xff, 0xff, 0xff}, "not JSON": mustPack(t, []byte("nope"), dictAgent1),
	} {
		bad := map[string]types.AttributeValue{}
		for k, v := range it {
			bad[k] = v
		}
		bad[attrPacked] = &types.AttributeValueMemberB{Value: p}
		if _, err := decodeAgent(bad); err == nil || !strings.Contains(err.Error(), `attribute "dz"`) {
			t.Errorf("%s: %v, want a decode error naming dz", name, err)
		}
	}
}

func hexHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func mustPack(t *testing.T, doc []byte, dict byte) []byte {
	t.Helper()
	p, err := pack(doc, dict)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func BenchmarkEncodeAgent(b *testing.B) {
	r := AgentRecord{Agent: sampleAgent()}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := encodeAgent(r, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAgent(b *testing.B) {
	it, err := encodeAgent(AgentRecord{Agent: sampleAgent()}, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := decodeAgent(it); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAgentReadable(b *testing.B) {
	it, err := encodeAgent(AgentRecord{Agent: sampleAgent()}, 1)
	if err != nil {
		b.Fatal(err)
	}
	delete(it, attrPacked)
	doc, _ := newItem().doc(utcAgent(sampleAgent()))
	it[attrDoc] = doc[attrDoc]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := decodeAgent(it); err != nil {
			b.Fatal(err)
		}
	}
}

// sampleRecord is sampleAgent as the gateway stores it: a credential bound
// and one offered, the desired hash delivered, an assignment's revision.
func sampleRecord() AgentRecord {
	a := sampleAgent()
	return AgentRecord{Agent: a, Push: Push{AckedHash: a.DesiredHash, AckedOffer: "otelcol-contrib@0.161.0"}, AssignedRev: 1234,
		Credential: Credential{Digest: hexHash("cred"), Next: hexHash("next"), Rotate: true,
			BoundAt: time.Date(2026, 12, 6, 3, 6, 8, 123456789, time.UTC)}}
}

// schema2Item is r as a build of schema version 2 stored it: what the
// store keeps beside the agent in attributes of their own, the agent packed
// against dictionary 1.
func schema2Item(t *testing.T, r AgentRecord, version int64) item {
	t.Helper()
	it := item{attrSV: num(2)}
	it.s(tables.AttrID, r.ID).n(attrV, version).sIf(tables.AttrFleet, r.Fleet).
		sIf(attrAckHash, r.Push.AckedHash).sIf(attrAckOffer, r.Push.AckedOffer).s(tables.AttrName, r.DisplayName()).
		n(attrAssigned, r.AssignedRev).s(attrCred, r.Credential.Digest).sIf(attrCredNext, r.Credential.Next).
		s(attrCredAt, sortableTime(r.Credential.BoundAt)).s(attrCredRotate, "1")
	it.stamp(r.written(r.Agent))
	it, err := it.packed(utcAgent(r.Agent), dictAgent1)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func sameRecord(t *testing.T, what string, got, want AgentRecord) {
	t.Helper()
	jg, _ := json.Marshal(got.Agent)
	jw, _ := json.Marshal(utcAgent(want.Agent))
	if !bytes.Equal(jg, jw) || got.Push != want.Push || got.AssignedRev != want.AssignedRev ||
		got.Credential != want.Credential || got.Version != want.Version {
		t.Fatalf("%s read back as %s %+v rev %d %+v v%d,\nwant %s %+v rev %d %+v v%d", what,
			jg, got.Push, got.AssignedRev, got.Credential, got.Version, jw, want.Push, want.AssignedRev, want.Credential, want.Version)
	}
}

// Schema 3 packs what no index and no condition reads (the acknowledged
// push, the assigned revision, the credential's digests) into the agent's
// document: none of it is an attribute any more, it reads back the same,
// and the item is at least 100 bytes smaller than schema 2 stored it. A
// build that kept them beside the document fails here.
func TestEncodeAgent_Schema3PacksWhatNoIndexReads(t *testing.T) {
	r := sampleRecord()
	r.Version = 9
	it, err := encodeAgent(r, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{attrAckHash, attrAckOffer, attrAssigned, attrCred, attrCredNext, attrCredAt, attrCredRotate} {
		if _, ok := it[name]; ok {
			t.Errorf("the item has attribute %q: it belongs in the packed document", name)
		}
	}
	if p := it[attrPacked].(*types.AttributeValueMemberB).Value; p[0] != dictAgent2 {
		t.Errorf("packed with dictionary %d, want %d", p[0], dictAgent2)
	}
	got, err := decodeAgent(it)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "schema 3", got, r)
	now, before := usage.ItemSize(it), usage.ItemSize(schema2Item(t, r, 9))
	if now > before-100 {
		t.Errorf("item %d B, schema 2 stored it in %d B: want at least 100 B fewer", now, before)
	}
	t.Logf("agent item: schema 2 %d B, schema 3 %d B", before, now)
}

// An item that a build of schema 2 wrote reads back whole: its credential,
// push and revision from their attributes.
func TestDecodeAgent_Schema2Item(t *testing.T) {
	r := sampleRecord()
	r.Version = 4
	got, err := decodeAgent(schema2Item(t, r, 4))
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "schema 2", got, r)
}
