// Command notify is the Lambda on the DynamoDB stream of the events table
// (the outbox of rollout notifications): it publishes every new event on
// the EventBridge bus, source "myriarch", the catalogue's detail-type and
// the event as the detail (docs/notifications.md). Delivery is at least
// once: a batch that stops early reports its first unpublished record, and
// Lambda delivers again from there; consumers drop repeats by eventId.
//
// Environment: MYRIARCH_EVENT_BUS (the bus's name or ARN).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/myriarch/myriarch/adapters/delivery"
	"github.com/myriarch/myriarch/adapters/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	bus := os.Getenv(delivery.EnvEventBus)
	if bus == "" {
		log.Error("notify: start", "error", delivery.EnvEventBus+" is not set")
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("notify: AWS configuration", "error", err.Error())
		os.Exit(1)
	}
	d := delivery.Delivery{Decode: store.DecodeEventImage, Publisher: delivery.EventBridge{Client: eventbridge.NewFromConfig(cfg), Bus: bus}, Log: log}
	lambda.Start(d.Lambda)
}
