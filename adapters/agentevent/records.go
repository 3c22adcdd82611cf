package agentevent

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/agent"
)

// Decoder decodes an agent item image (the store's strict decoding).
type Decoder func(map[string]types.AttributeValue) (agent.Agent, error)

// FromImages builds a Change from the old and new images of a stream record;
// an absent image is nil.
func FromImages(decode Decoder, oldImg, newImg map[string]types.AttributeValue) (Change, error) {
	var c Change
	for _, side := range []struct {
		img map[string]types.AttributeValue
		to  **agent.Agent
	}{{oldImg, &c.Old}, {newImg, &c.New}} {
		if len(side.img) == 0 {
			continue
		}
		a, err := decode(side.img)
		if err != nil {
			return Change{}, err
		}
		*side.to = &a
	}
	return c, nil
}

// FromRecords decodes the changes of stream records.
func FromRecords(decode Decoder, recs []streams.Record) ([]Change, error) {
	out := make([]Change, 0, len(recs))
	for _, r := range recs {
		c, err := FromImages(decode, r.Old, r.New)
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
