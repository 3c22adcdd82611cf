package agentevent

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/myriarch/myriarch/pkg/streams"
)

// Poller delivers the agents table's stream to a Handler the way the Lambda
// event source mapping does in the cloud (streams.Poller). The local stack
// uses it.
type Poller struct {
	Streams   *dynamodbstreams.Client
	StreamArn string
	Decode    Decoder
	Handler   Handler
	Interval  time.Duration // between empty reads; default 200ms
	Log       *slog.Logger
	// Ready, if set, is closed once the shards are positioned: changes made
	// afterwards are delivered.
	Ready chan<- struct{}
}

// Run polls until ctx ends. It starts at the stream's latest position.
func (p Poller) Run(ctx context.Context) error {
	return streams.Poller{Streams: p.Streams, StreamArn: p.StreamArn, Name: "agent stream", Interval: p.Interval, Log: p.Log, Ready: p.Ready,
		Handler: func(ctx context.Context, recs []streams.Record) error {
			changes, err := FromRecords(p.Decode, recs)
			if err != nil {
				return err
			}
			return p.Handler.Handle(ctx, changes)
		}}.Run(ctx)
}
