package agentevent

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/agent"
)

// Decoder decodes an agent item image (the store's strict decoding) and
// what its write changed, as the writer stamped it (store.DecodeAgentImage).
type Decoder func(map[string]types.AttributeValue) (agent.Agent, agent.Written, error)

// FromRecord builds a Change from a stream record. The agents table's
// stream carries new images, stamped by their writers with what they
// changed. Where a record has an old image too, both images tell it. A new
// image without a stamp (written by an older build) counts as changing
// everything; a delete without an image (nobody deletes agents but a person
// at the console) is named by its key.
func FromRecord(decode Decoder, r streams.Record) (Change, error) {
	var old, nw *agent.Agent
	var w agent.Written
	if len(r.Old) > 0 {
		a, _, err := decode(r.Old)
		if err != nil {
			return Change{}, fmt.Errorf("old image: %w", err)
		}
		old = &a
	}
	if len(r.New) > 0 {
		a, written, err := decode(r.New)
		if err != nil {
			return Change{}, fmt.Errorf("new image: %w", err)
		}
		nw, w = &a, written
	}
	switch {
	case old != nil:
		return Between(old, nw), nil
	case nw != nil && w.Stamped:
		return Change{ID: nw.ID, New: nw, Written: w}, nil
	case nw != nil:
		return Between(nil, nw), nil
	}
	id, ok := r.Keys[tables.AttrID].(*types.AttributeValueMemberS)
	if !ok || id.Value == "" {
		return Change{}, fmt.Errorf("a record without an image names no agent in its key")
	}
	return Change{ID: id.Value, Written: agent.Written{Decisive: true}}, nil
}

// FromRecords decodes the changes of stream records.
func FromRecords(decode Decoder, recs []streams.Record) ([]Change, error) {
	out := make([]Change, 0, len(recs))
	for _, r := range recs {
		c, err := FromRecord(decode, r)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", r.SequenceNumber, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Records handles stream records as a streams.Handler (the local stack's
// poller): decoded with decode, then Handle.
func (h Handler) Records(decode Decoder) streams.Handler {
	return func(ctx context.Context, recs []streams.Record) error {
		changes, err := FromRecords(decode, recs)
		if err != nil {
			return err
		}
		return h.Handle(ctx, changes)
	}
}

// FromLambdaEvent turns the records of a DynamoDB stream event, as Lambda
// delivers them, into changes. A record that does not decode is an error:
// the batch is delivered again rather than a change lost.
func FromLambdaEvent(decode Decoder, ev events.DynamoDBEvent) ([]Change, error) {
	recs, err := streams.FromLambda(ev)
	if err != nil {
		return nil, err
	}
	return FromRecords(decode, recs)
}
