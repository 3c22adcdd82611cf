package delivery

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/myriarch/myriarch/adapters/streams"
)

// Lambda handles a batch of the events table's stream as the notify
// function receives it. A record that cannot be read fails the whole batch
// (Lambda delivers it again, bisecting it); a delivery that stops early
// reports the first record not published as the batch item failure, from
// which Lambda delivers again (the event source mapping has
// ReportBatchItemFailures on).
func (d Delivery) Lambda(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	recs, err := streams.FromLambda(ev)
	if err != nil {
		return events.DynamoDBEventResponse{}, err
	}
	failed, err := d.Handle(ctx, recs)
	if err == nil {
		return events.DynamoDBEventResponse{}, nil
	}
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: failed}}}, nil
}
