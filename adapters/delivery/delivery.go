// Package delivery hands rollout notifications from the outbox's stream
// (the events table's new images) to where people watch them: the
// EventBridge bus in the cloud (functions/notify), a webhook and the log in
// the local stack. Delivery is at least once: a batch that fails is
// delivered again from the first event not published, so consumers drop
// repeats by eventId.
package delivery

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/notify"
)

// Publisher publishes notifications in order. It returns how many of es,
// from the first, it published, and the error that stopped it.
type Publisher interface {
	Publish(ctx context.Context, es []notify.Event) (int, error)
}

// Decoder decodes an event item's image (store.DecodeEventImage).
type Decoder func(map[string]types.AttributeValue) (notify.Event, error)

// Delivery publishes the events of stream records.
type Delivery struct {
	Decode    Decoder
	Publisher Publisher
	Log       *slog.Logger
}

// Handle publishes the events the records insert (the table's only other
// records are the TTL's deletions). When it stops early it returns the
// sequence number of the first record not published (Lambda's batch item
// failure: delivery resumes there) with the reason. A record that does not
// decode stops it too, after the events before it.
func (d Delivery) Handle(ctx context.Context, recs []streams.Record) (failed string, err error) {
	var es []notify.Event
	var seqs []string // of es, then of the record that did not decode
	var bad error
	for _, r := range recs {
		if r.EventName != "INSERT" || r.New == nil {
			continue
		}
		seqs = append(seqs, r.SequenceNumber)
		e, err := d.Decode(r.New)
		if err != nil {
			bad = fmt.Errorf("record %s: %w", r.SequenceNumber, err)
			break
		}
		es = append(es, e)
	}
	n, err := d.Publisher.Publish(ctx, es)
	switch {
	case err == nil && n < len(es):
		err = fmt.Errorf("published %d of %d events", n, len(es))
	case err == nil:
		n, err = len(es), bad
	}
	if err != nil {
		d.log().Warn("notifications: delivery stopped, to be retried", "published", n, "of", len(seqs), "error", err.Error())
		return seqs[n], err
	}
	return "", nil
}

// Poll is Handle as a streams.Handler: an error has the poller deliver the
// batch again.
func (d Delivery) Poll(ctx context.Context, recs []streams.Record) error {
	_, err := d.Handle(ctx, recs)
	return err
}

func (d Delivery) log() *slog.Logger {
	if d.Log == nil {
		return slog.Default()
	}
	return d.Log
}

// Publishers publishes to each in turn; it counts what all of them
// published.
type Publishers []Publisher

// Publish publishes es to every publisher.
func (ps Publishers) Publish(ctx context.Context, es []notify.Event) (int, error) {
	least := len(es)
	for _, p := range ps {
		n, err := p.Publish(ctx, es)
		if err != nil {
			return min(n, least), err
		}
		least = min(n, least)
	}
	return least, nil
}

// Log writes one line per notification: the local stack's console.
type Log struct{ Log *slog.Logger }

// Publish logs es.
func (l Log) Publish(_ context.Context, es []notify.Event) (int, error) {
	for _, e := range es {
		l.Log.Info("rollout notification", "eventId", e.EventID, "detailType", notify.DetailType(e.Type), "rollout", e.Rollout.ID,
			"fleet", e.Rollout.Fleet, "status", string(e.Rollout.Status), "reason", e.Reason)
	}
	return len(es), nil
}
