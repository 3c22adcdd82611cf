package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
)

// LaggingAgents pages through the agents the gateway has something to push
// to (gateway.Agents): a Scan of the sparse index lagging, which holds those
// agents alone. The gateway polls it every second, mostly to learn that it
// is empty; one Scan answers that in one request, where a Query per shard
// of the index took tables.LagShards requests (and their CPU in every
// gateway task) each second. The shards still spread the index's writes
// over partition keys when a wave makes thousands of agents lag at once.
// A page may hold fewer agents than limit while next is set (a Scan of an
// index split over several partitions may even return an empty page with
// next set); the order is DynamoDB's.
//
// The index projects the desired state alone (tables.LagNonKeyAttributes),
// so a listed agent has its ID, DesiredHash, PackageOffer and
// TargetVersion and nothing else; its version is a *ListedVersion, which
// orders against the versions of reads and writes and lets the gateway
// write over it without reading the agent when nothing but the desired
// state changed since the session's own version (ListedVersion.Over).
func (s *Store) LaggingAgents(ctx context.Context, token string, limit int) ([]agent.Agent, []any, string, error) {
	start, err := decodeToken(token)
	if err != nil {
		return nil, nil, "", err
	}
	out, err := s.scan(ctx, &dynamodb.ScanInput{
		TableName: &s.names.Agents, IndexName: aws.String(tables.IndexLagging),
		Limit: pageLimit(limit), ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, nil, "", classify(badStartKey(err, start), "scan the lagging agents")
	}
	page, versions := make([]agent.Agent, 0, len(out.Items)), make([]any, 0, len(out.Items))
	var older []int
	for _, av := range out.Items {
		a, v, err := decodeLagging(av)
		if err != nil {
			return nil, nil, "", err
		}
		if v.factsVersion == 0 {
			older = append(older, len(page))
		}
		page, versions = append(page, a), append(versions, any(v))
	}
	if err := s.wholeListed(ctx, page, versions, older); err != nil {
		return nil, nil, "", err
	}
	return page, versions, encodeToken(out.LastEvaluatedKey), nil
}

// wholeListed replaces the entries at older of a lagging page with their
// whole agents: an item written by a build before the index projected the
// desired state alone has no copy of it to list (and no fv), so it is read
// from the table, as the index listed it before.
func (s *Store) wholeListed(ctx context.Context, page []agent.Agent, versions []any, older []int) error {
	if len(older) == 0 {
		return nil
	}
	ids := make([]string, len(older))
	for i, k := range older {
		ids[i] = page[k].ID
	}
	recs, err := s.agentRecords(ctx, ids, false)
	if err != nil {
		return err
	}
	for _, k := range older {
		if r, ok := recs[page[k].ID]; ok {
			page[k], versions[k] = r.Agent, versionOf(r)
		} else {
			versions[k] = nil // deleted since: the gateway reads it, and finds it gone
		}
	}
	return nil
}

// lagged copies the desired state of a lagging agent into the attributes
// the lagging index projects. They cost about 40 bytes on the item while
// the agent lags (a few seconds of a wave); a lagging entry is then about
// 100 bytes instead of the whole item's 420.
func (it item) lagged(a agent.Agent) item {
	if a.DesiredHash != "" {
		it[tables.AttrLagHash] = hashValue(a.DesiredHash)
	}
	return it.sIf(tables.AttrLagOffer, a.PackageOffer).sIf(tables.AttrLagTargetVer, a.TargetVersion)
}

// decodeLagging reads an entry of the lagging index: the agent's desired
// state and its version.
func decodeLagging(av map[string]types.AttributeValue) (agent.Agent, *ListedVersion, error) {
	id := keyOf(av, tables.AttrID)
	d := newDecoder("lagging agent "+id, av)
	a := agent.Agent{ID: d.str(tables.AttrID), PackageOffer: d.optStr(tables.AttrLagOffer), TargetVersion: d.optStr(tables.AttrLagTargetVer)}
	if v, ok := av[tables.AttrLagHash]; ok {
		a.DesiredHash = d.hash(tables.AttrLagHash, v)
	}
	l := &ListedVersion{version: d.num(attrV), factsVersion: d.optNum(tables.AttrFactsV),
		desiredHash: a.DesiredHash, packageOffer: a.PackageOffer, targetVersion: a.TargetVersion}
	return a, l, d.err
}

// hashValue is a configuration hash as an attribute: hex sha256 (every
// hash this build computes, revision.Hash) as its 32 bytes, half the size;
// anything else as the string.
func hashValue(h string) types.AttributeValue {
	if len(h) == 2*sha256.Size && strings.ToLower(h) == h {
		if b, err := hex.DecodeString(h); err == nil {
			return &types.AttributeValueMemberB{Value: b}
		}
	}
	return str(h)
}

// hash reads what hashValue wrote.
func (d *decoder) hash(name string, v types.AttributeValue) string {
	if b, ok := v.(*types.AttributeValueMemberB); ok {
		if len(b.Value) != sha256.Size {
			d.fail("attribute %q holds %d bytes, want %d", name, len(b.Value), sha256.Size)
			return ""
		}
		return hex.EncodeToString(b.Value)
	}
	return d.asStr(name, v)
}

// ListedVersion is an agent's version as the lagging index lists it: the
// item's counter, the counter of its last write of anything but the
// desired state (AgentRecord.FactsVersion), and the desired state.
type ListedVersion struct {
	version, factsVersion                    int64
	desiredHash, packageOffer, targetVersion string
}

// After reports whether l is a later version of the agent than other, a
// version this store returned (gateway.OrderedVersion).
func (l *ListedVersion) After(other any) bool {
	o, ok := counterOf(other)
	return ok && l != nil && l.version > o
}

// Over is the version a session's stored version (from LoadAgent or
// SaveAgent) becomes with l's desired state, when only the desired state
// was written since it: both name the same last write of everything else,
// so everything a gateway write keeps as read (the fleet, the credential,
// what was pushed, the assignment) is as stored, and a write over the
// result, conditional on l's counter, loses nothing. ok is false otherwise
// (or when either counter is unknown: an item written before fv), and the
// session reads the agent before its next write, as after any lost race.
func (l *ListedVersion) Over(stored any) (any, bool) {
	p, ok := stored.(*AgentVersion)
	if !ok || p == nil || l == nil || l.factsVersion == 0 || p.factsVersion != l.factsVersion || l.version <= p.version {
		return nil, false
	}
	v := *p
	v.version = l.version
	v.owned.desiredHash, v.owned.packageOffer, v.owned.targetVersion = l.desiredHash, l.packageOffer, l.targetVersion
	return &v, true
}

// counterOf is the item counter of a version this store returned.
func counterOf(v any) (int64, bool) {
	switch v := v.(type) {
	case *AgentVersion:
		if v != nil {
			return v.version, true
		}
	case *ListedVersion:
		if v != nil {
			return v.version, true
		}
	}
	return 0, false
}

// lagShard spreads the lagging index over tables.LagShards partition keys
// by a hash of the agent id.
func lagShard(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return strconv.Itoa(int(h.Sum32() % tables.LagShards))
}
