package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// wavePrefix starts the sort key of a wave's targets: five digits, so that
// waves sort numerically and "targets of wave 3" is begins_with 00003#.
func wavePrefix(wave int) string { return fmt.Sprintf("%05d#", wave) }

func targetKey(rolloutID string, wave int, agentID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{tables.AttrRolloutID: str(rolloutID), tables.AttrWaveAgent: str(wavePrefix(wave) + agentID)}
}

// encodeTarget needs the rollout for the keys of index byAgentKind: its
// kind and its creation time.
func encodeTarget(r rollout.Rollout, t rollout.Target, version int64) (item, error) {
	if t.Wave < 0 || t.Wave > 99999 {
		return nil, fmt.Errorf("target %s: wave %d out of range", t.AgentID, t.Wave)
	}
	// The keys, the status and the counter are attributes of the item, and
	// decodeTarget takes them from there: since schema version 3 the
	// document does not spell them again (about 40 of a target item's 385
	// bytes, and a wave reads each target about five times).
	doc := t
	doc.RolloutID, doc.AgentID, doc.Wave, doc.Status, doc.Version = "", "", 0, "", 0
	return newItem().s(tables.AttrRolloutID, r.ID).s(tables.AttrWaveAgent, wavePrefix(t.Wave)+t.AgentID).n(attrV, version).
		s(tables.AttrAgentKind, t.AgentID+"#"+string(r.Kind)).s(tables.AttrRolloutCreated, sortableTime(r.CreatedAt)).
		s(attrStatus, string(t.Status)).packed(doc, dictTarget1)
}

func decodeTarget(av map[string]types.AttributeValue) (rollout.Target, error) {
	var t rollout.Target
	err := decodeTargetInto(&t, av)
	return t, err
}

// decodeTargetInto is decodeTarget into *t, which must be the zero target:
// a page decodes its targets in place in its slice, rather than each on the
// heap first (100,000 allocations of 256 bytes in an evaluation).
func decodeTargetInto(t *rollout.Target, av map[string]types.AttributeValue) error {
	rid, wa := keyOf(av, tables.AttrRolloutID), keyOf(av, tables.AttrWaveAgent)
	d := newDecoder("target "+rid+" "+wa, av)
	v := d.num(attrV)
	d.str(tables.AttrRolloutID)
	d.str(tables.AttrWaveAgent)
	d.str(tables.AttrAgentKind)
	d.str(tables.AttrRolloutCreated)
	status := d.str(attrStatus)
	d.targetDoc(t)
	wave, agentID, ok := splitWaveAgent(wa)
	if !ok && d.err == nil {
		d.fail("attribute %q is %q, want <wave, 5 digits>#<agentId>", tables.AttrWaveAgent, wa)
	}
	t.RolloutID, t.Wave, t.AgentID, t.Status, t.Version = rid, wave, agentID, rollout.TargetStatus(status), v
	return d.err
}

// targetDoc is doc for a target's document, unmarshaled with
// github.com/go-json-experiment/json in its encoding/json (v1) mode, the
// implementation encoding/json itself runs on under GOEXPERIMENT=jsonv2:
// the same target from the same document (TestTargetDoc_AsEncodingJSON) in
// less than half the time, and with one allocation instead of nine (it
// reuses the short strings every target repeats: status, references). An
// evaluation of the whole rollout decodes every target: at 100,000, about
// 0.25 s with encoding/json.
func (d *decoder) targetDoc(t *rollout.Target) {
	d.docWith(func(doc []byte) error { return jsonv1.Unmarshal(doc, t) })
}

func splitWaveAgent(s string) (int, string, bool) {
	w, id, ok := strings.Cut(s, "#")
	n, err := strconv.Atoi(w)
	return n, id, ok && err == nil && len(w) == 5 && id != ""
}

// TargetsPage is one page of a rollout's targets: of one wave (a
// begins_with on the sort key) or of all waves (rollout.AllWaves) in wave order.
func (s *Store) TargetsPage(ctx context.Context, rolloutID string, wave int, token string, limit int) (page.Page[rollout.Target], error) {
	return s.targetPage(ctx, rolloutID, wave, token, limit, false)
}

func (s *Store) targetPage(ctx context.Context, rolloutID string, wave int, token string, limit int, consistent bool) (page.Page[rollout.Target], error) {
	start, err := decodeToken(token)
	if err != nil {
		return page.Page[rollout.Target]{}, err
	}
	in := &dynamodb.QueryInput{
		TableName: &s.names.Targets, ConsistentRead: &consistent, Limit: pageLimit(limit), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("#r = :r"),
		ExpressionAttributeNames:  map[string]string{"#r": tables.AttrRolloutID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": str(rolloutID)},
	}
	if wave != rollout.AllWaves {
		in.KeyConditionExpression = aws.String("#r = :r AND begins_with(#w, :w)")
		in.ExpressionAttributeNames["#w"] = tables.AttrWaveAgent
		in.ExpressionAttributeValues[":w"] = str(wavePrefix(wave))
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return page.Page[rollout.Target]{}, classify(err, "query targets of rollout "+rolloutID)
	}
	p := page.Page[rollout.Target]{Next: encodeToken(out.LastEvaluatedKey)}
	if len(out.Items) > 0 {
		p.Items = make([]rollout.Target, len(out.Items))
	}
	for i, av := range out.Items {
		if err := decodeTargetInto(&p.Items[i], av); err != nil {
			return page.Page[rollout.Target]{}, err
		}
	}
	return p, nil
}

// allTargets reads every target of rollout rolloutID, 1,000 a query, into
// one slice of exactly their number. Appending page after page to one slice
// copied the targets read so far each time it grew: about five times the
// 25 MB of 100,000 targets, each copy fresh memory for the process to fault
// in and for the collector to scan. The pages are copied once, at the end.
func (s *Store) allTargets(ctx context.Context, rolloutID string) ([]rollout.Target, error) {
	var pages [][]rollout.Target
	for token := ""; ; {
		p, err := s.targetPage(ctx, rolloutID, rollout.AllWaves, token, 1000, true)
		if err != nil {
			return nil, err
		}
		if pages = append(pages, p.Items); p.Next == "" {
			break
		}
		token = p.Next
	}
	if len(pages) == 1 {
		return pages[0], nil
	}
	return slices.Concat(pages...), nil
}

// LastTargets finds, per agent, its target of kind k in the newest rollout
// (index byAgentKind, newest first, one item per query) with that rollout's
// status, for the planner's exclusions. A target whose rollout does not
// exist (left by a creation that lost its race and crashed) is skipped for
// the next older one. Each distinct rollout is read once.
func (s *Store) LastTargets(ctx context.Context, agentIDs []string, k policy.Kind) (map[string]planner.LastTarget, error) {
	var mu sync.Mutex
	out := make(map[string]planner.LastTarget, len(agentIDs))
	statuses := map[string]*rollout.Status{} // nil: the rollout does not exist
	status := func(ctx context.Context, id string) (*rollout.Status, error) {
		mu.Lock()
		st, ok := statuses[id]
		mu.Unlock()
		if ok {
			return st, nil
		}
		// Eventually consistent: a status a second old decides exclusions as well.
		av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Rollouts, Key: idKey(id)})
		if err != nil {
			return nil, classify(err, "get rollout "+id)
		}
		if av != nil {
			r, err := decodeRollout(av)
			if err != nil {
				return nil, err
			}
			st = &r.Status
		}
		mu.Lock()
		statuses[id] = st
		mu.Unlock()
		return st, nil
	}
	err := forEach(ctx, len(agentIDs), workers, func(ctx context.Context, i int) error {
		lt, ok, err := s.lastTarget(ctx, agentIDs[i], k, status)
		if ok {
			mu.Lock()
			out[agentIDs[i]] = lt
			mu.Unlock()
		}
		return err
	})
	return out, err
}

func (s *Store) lastTarget(ctx context.Context, agentID string, k policy.Kind,
	status func(context.Context, string) (*rollout.Status, error)) (planner.LastTarget, bool, error) {
	var start map[string]types.AttributeValue
	for {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Targets, IndexName: aws.String(tables.IndexByAgentKind), ScanIndexForward: aws.Bool(false),
			Limit: aws.Int32(1), ExclusiveStartKey: start,
			KeyConditionExpression:    aws.String("#ak = :ak"),
			ExpressionAttributeNames:  map[string]string{"#ak": tables.AttrAgentKind},
			ExpressionAttributeValues: map[string]types.AttributeValue{":ak": str(agentID + "#" + string(k))},
		})
		if err != nil {
			return planner.LastTarget{}, false, classify(err, "query last target of agent "+agentID)
		}
		for _, av := range out.Items {
			t, err := decodeTarget(av)
			if err != nil {
				return planner.LastTarget{}, false, err
			}
			st, err := status(ctx, t.RolloutID)
			if err != nil || st != nil {
				return planner.LastTarget{Target: t, RolloutStatus: statusOf(st)}, err == nil, err
			}
		}
		if start = out.LastEvaluatedKey; start == nil {
			return planner.LastTarget{}, false, nil
		}
	}
}

func statusOf(st *rollout.Status) rollout.Status {
	if st == nil {
		return ""
	}
	return *st
}
