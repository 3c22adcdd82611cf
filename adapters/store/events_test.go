package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/notify/notifytest"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/rollout"
)

// outbox is the store as notifytest's Outbox: each change is a SaveEvaluation of
// the rollout (created on its first change) with the events.
type outbox struct {
	s   *Store
	ctx context.Context
}

func (o outbox) Store(t *testing.T, id, fleet string, at time.Time, types ...string) {
	t.Helper()
	r, err := o.s.GetRollout(o.ctx, id)
	if errors.Is(err, rollout.ErrNotFound) {
		created, ts := newRollout(id, 1, 1, at)
		created.Fleet = fleet
		must(t, o.s.CreateRollout(o.ctx, created, ts))
		r, err = o.s.GetRollout(o.ctx, id)
	}
	must(t, err)
	must(t, o.s.SaveEvaluation(o.ctx, r, nil, notify.New(r, nil, engineEvents(types...), at)...))
}

func (o outbox) Page(q notify.Query) (notify.Page, error) { return o.s.EventsPage(o.ctx, q) }

func engineEvents(types ...string) []engine.Event {
	out := make([]engine.Event, len(types))
	for i, typ := range types {
		out[i] = engine.Event{Type: typ, Reason: "because " + typ}
	}
	return out
}

func TestEvents_FeedContract(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	notifytest.Contract(t, outbox{s, ctx})
	if _, err := s.EventsPage(ctx, notify.Query{After: "bm90IG91cnM"}); !errors.Is(err, page.ErrBadToken) {
		t.Errorf("a foreign cursor: %v, want page.ErrBadToken", err)
	}
}

// created stores rollout r1 of n targets and reads it back, as a pass does.
func created(t *testing.T, s *Store, ctx context.Context, n int) (rollout.Rollout, []rollout.Target) {
	t.Helper()
	r, ts := newRollout("r1", n, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	r, ts, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	return r, ts
}

func allEvents(t *testing.T, s *Store, ctx context.Context, rolloutID string) []notify.Event {
	t.Helper()
	p, err := s.EventsPage(ctx, notify.Query{Rollout: rolloutID, Limit: 1000})
	must(t, err)
	return p.Items
}

// The events of a pass are written with the rollout or not at all: a pass
// that lost its race (the rollout's version, or a target's, moved on)
// stores no event, and the pass that won stored its own exactly once.
func TestSavePass_EventsOnlyWithTheChange(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := created(t, s, ctx, 4)

	won := r
	won.Status = rollout.Running
	must(t, s.SaveEvaluation(ctx, won, nil, notify.New(won, ts, engineEvents("rollout.started"), t0)...))

	lost := r // read the same version 1
	lost.Status = rollout.Paused
	err := s.SaveEvaluation(ctx, lost, nil, notify.New(lost, ts, engineEvents("rollout.paused"), t0)...)
	if !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("a pass on a stale rollout: %v, want ErrConflict", err)
	}
	cur, ts, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	stale := ts[0] // a target whose version moves on before the pass is stored
	ts[0].Status = rollout.TargetInProgress
	must(t, s.SaveEvaluation(ctx, cur, ts[:1]))
	cur.Version++
	stale.Status = rollout.TargetFailed
	err = s.SaveEvaluation(ctx, cur, []rollout.Target{stale}, notify.New(cur, ts, engineEvents("rollout.failed"), t0)...)
	if !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("a pass on a stale target: %v, want ErrConflict", err)
	}
	got := allEvents(t, s, ctx, "r1")
	if len(got) != 1 || got[0].EventID != "r1:v2:0" || got[0].Type != "rollout.started" || got[0].Rollout.Version != 2 ||
		got[0].Rollout.Status != rollout.Running || got[0].Rollout.Counts["pending"] != 4 {
		t.Fatalf("events %+v, want only rollout.started of version 2", got)
	}
}

// A pass too large for one transaction is a chain; its events go into the
// last link, with the rollout, stamped with the version that link writes.
// A final status releases the lock in the same link, after the events.
func TestSavePass_EventsOfALargePassAreInTheLastLink(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := created(t, s, ctx, 250)
	for i := range ts {
		ts[i].Status = rollout.TargetSucceeded
	}
	r.Status = rollout.Completed
	es := notify.New(r, ts, engineEvents("rollout.completed", "rollout.some_other"), t0)
	must(t, s.SaveEvaluation(ctx, r, ts, es...))
	stored, err := s.GetRollout(ctx, "r1")
	must(t, err)
	if stored.Version != 4 { // 1 + two intermediate links + the last
		t.Fatalf("version %d, want 4 after a chain of three", stored.Version)
	}
	got := allEvents(t, s, ctx, "r1")
	if len(got) != 2 || got[0].EventID != "r1:v4:0" || got[1].EventID != "r1:v4:1" || got[0].Rollout.Counts["succeeded"] != 250 {
		t.Fatalf("events %+v, want two of version 4 counting 250 succeeded targets", got)
	}
	if a, err := s.ActiveRollout(ctx, "edge", r.Kind); err != nil || a != nil {
		t.Fatalf("active %+v %v: the lock must be released with the events", a, err)
	}
	if err := s.SaveEvaluation(ctx, stored, nil, make([]notify.Event, maxEventsPerChange+1)...); err == nil {
		t.Fatal("a change with more events than its transaction holds was accepted")
	}
}

// An event item carries what the stream, the feed and the TTL need.
func TestEvents_ItemLayout(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	o := outbox{s, ctx}
	o.Store(t, "r1", "edge", t0, "rollout.paused")
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.names.Events), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{tables.AttrRolloutID: str("r1"), tables.AttrSeq: str(notify.SeqKey(2, 0))}})
	must(t, err)
	it := out.Item
	want := map[string]string{"id": "r1:v2:0", "type": "rollout.paused", "detailType": "Rollout Paused", "fleet": "edge",
		"listed": "event", "at": "2026-03-02T10:00:00.000000000Z", "feed": "2026-03-02T10:00:00.000000000Z#r1#0000000002#000"}
	for k, v := range want {
		if got := keyOf(it, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	exp, ok := it[tables.AttrExpiresAt].(*types.AttributeValueMemberN)
	if !ok || exp.Value != strconv.FormatInt(t0.Add(14*24*time.Hour).Unix(), 10) {
		t.Errorf("expiresAt %v, want 14 days after the event", it[tables.AttrExpiresAt])
	}
	e, err := DecodeEventImage(it)
	if err != nil || e.EventID != "r1:v2:0" || e.Reason != "because rollout.paused" {
		t.Errorf("decoded %+v %v", e, err)
	}
	it[attrEventID] = str("r1:v9:9")
	if _, err := DecodeEventImage(it); err == nil {
		t.Error("an item whose id and document disagree decoded")
	}
}

// The local stack turns on the TTL of the events table, as the CDK app
// does; turning it on twice is no error.
func TestEnableTimeToLive(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	prefix := strings.TrimSuffix(s.names.Events, tables.Events.Name)
	for i := 0; i < 2; i++ {
		must(t, EnableTimeToLive(ctx, s.db, prefix))
	}
	ttl, err := s.db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(s.names.Events)})
	must(t, err)
	if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != tables.AttrExpiresAt || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Errorf("time to live %+v, want enabled on %s", d, tables.AttrExpiresAt)
	}
}

// A failure the state machine recorded is the event rollout.failed, once;
// recording it again, or on a final rollout, writes nothing.
func TestRecordFailure_WritesTheEvent(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	created(t, s, ctx, 3)
	for i := 0; i < 2; i++ {
		st, err := s.RecordFailure(ctx, "r1", "engine error Boom: it broke", t0.Add(time.Minute))
		if err != nil || st != rollout.Failed {
			t.Fatalf("record failure: %s %v", st, err)
		}
	}
	got := allEvents(t, s, ctx, "r1")
	if len(got) != 1 || got[0].Type != "rollout.failed" || got[0].Reason != "engine error Boom: it broke" ||
		got[0].Rollout.Counts["total"] != 3 || !got[0].Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("events %+v, want one rollout.failed counting 3 targets", got)
	}
}
