package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
)

// EventRetention is how long the outbox keeps an event (the TTL of the
// events table): long enough for the feed to show two weeks of history and
// for a stream consumer that was down for a day to be replayed by hand.
const EventRetention = 14 * 24 * time.Hour

// listedEvent is the partition key of index feed: every event.
const listedEvent = "event"

// maxEventsPerChange bounds the events of one change: they share the last
// transaction of a pass with the rollout (DynamoDB's 100 items).
const maxEventsPerChange = 20

// Attributes of event items besides the keys.
const (
	attrEventID    = "id"         // notify.Event.EventID
	attrEventType  = "type"       // rollout.paused
	attrDetailType = "detailType" // Rollout Paused
	attrAt         = "at"         // the event's time, sortable
)

func encodeEvent(e notify.Event) (item, error) {
	return newItem().s(tables.AttrRolloutID, e.Rollout.ID).s(tables.AttrSeq, notify.SeqKey(e.Rollout.Version, e.Index)).
		s(attrEventID, e.EventID).s(attrEventType, e.Type).s(attrDetailType, notify.DetailType(e.Type)).
		s(attrAt, notify.TimeKey(e.Time)).s(tables.AttrFeed, notify.FeedKey(e)).s(tables.AttrListed, listedEvent).
		s(tables.AttrFleet, e.Rollout.Fleet).n(tables.AttrExpiresAt, e.Time.Add(EventRetention).Unix()).doc(e)
}

// putEvents are the puts of a change's events, each on the condition that
// it does not exist: its id is its key, so a change can only be stored once.
func (s *Store) putEvents(es []notify.Event) ([]types.TransactWriteItem, error) {
	out := make([]types.TransactWriteItem, len(es))
	for i, e := range es {
		it, err := encodeEvent(e)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", e.EventID, err)
		}
		out[i] = types.TransactWriteItem{Put: &types.Put{TableName: &s.names.Events, Item: it,
			ConditionExpression:      aws.String("attribute_not_exists(#r)"),
			ExpressionAttributeNames: map[string]string{"#r": tables.AttrRolloutID}}}
	}
	return out, nil
}

// DecodeEventImage decodes an event item as the events table's stream
// carries it (NewImage), with the same strict rules as a read.
func DecodeEventImage(av map[string]types.AttributeValue) (notify.Event, error) {
	d := newDecoder("event "+keyOf(av, tables.AttrRolloutID)+" "+keyOf(av, tables.AttrSeq), av)
	var e notify.Event
	id := d.str(attrEventID)
	d.str(tables.AttrFeed)
	d.doc(&e)
	if d.err == nil && e.EventID != id {
		d.fail("attribute %q is %q, the document says %q", attrEventID, id, e.EventID)
	}
	return e, d.err
}

// EventsPage reads one page of the feed (notify.Query): a rollout's events
// from the table (strongly consistent), a fleet's from index feedByFleet,
// every event from index feed. A cursor of another order or one the store
// did not issue is page.ErrBadToken.
func (s *Store) EventsPage(ctx context.Context, q notify.Query) (notify.Page, error) {
	after, err := q.Start()
	if err != nil {
		return notify.Page{}, fmt.Errorf("%w: %w", page.ErrBadToken, err)
	}
	in := &dynamodb.QueryInput{TableName: &s.names.Events, Limit: pageLimit(q.Limit),
		ExpressionAttributeNames: map[string]string{}, ExpressionAttributeValues: map[string]types.AttributeValue{}}
	sortKey := tables.AttrFeed
	switch {
	case q.Rollout != "":
		sortKey = tables.AttrSeq
		in.ConsistentRead = aws.Bool(true)
		in.KeyConditionExpression = aws.String("#p = :p")
		in.ExpressionAttributeNames["#p"], in.ExpressionAttributeValues[":p"] = tables.AttrRolloutID, str(q.Rollout)
		var filters []string
		if q.Fleet != "" {
			filters = append(filters, "#f = :f")
			in.ExpressionAttributeNames["#f"], in.ExpressionAttributeValues[":f"] = tables.AttrFleet, str(q.Fleet)
		}
		if !q.Since.IsZero() {
			filters = append(filters, "#at >= :since")
			in.ExpressionAttributeNames["#at"], in.ExpressionAttributeValues[":since"] = attrAt, str(notify.TimeKey(q.Since))
		}
		if len(filters) > 0 {
			in.FilterExpression = aws.String(strings.Join(filters, " AND "))
		}
	case q.Fleet != "":
		in.IndexName, in.KeyConditionExpression = aws.String(tables.IndexFeedByFleet), aws.String("#p = :p")
		in.ExpressionAttributeNames["#p"], in.ExpressionAttributeValues[":p"] = tables.AttrFleet, str(q.Fleet)
	default:
		in.IndexName, in.KeyConditionExpression = aws.String(tables.IndexFeed), aws.String("#p = :p")
		in.ExpressionAttributeNames["#p"], in.ExpressionAttributeValues[":p"] = tables.AttrListed, str(listedEvent)
	}
	if after != "" {
		*in.KeyConditionExpression += " AND #s > :after"
		in.ExpressionAttributeNames["#s"], in.ExpressionAttributeValues[":after"] = sortKey, str(after)
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return notify.Page{}, classify(err, "query events")
	}
	p := notify.Page{More: len(out.LastEvaluatedKey) > 0}
	last := after
	for _, av := range out.Items {
		e, err := DecodeEventImage(av)
		if err != nil {
			return notify.Page{}, err
		}
		p.Items = append(p.Items, e)
		last = keyOf(av, sortKey)
	}
	if p.More { // past what a filter dropped, too
		last = keyOf(out.LastEvaluatedKey, sortKey)
	}
	p.Next = q.Next(last, p.More)
	return p, nil
}
