package delivery

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/myriarch/myriarch/core/notify"
)

// EnvEventBus names the bus the notify function publishes on.
const EnvEventBus = "MYRIARCH_EVENT_BUS"

// PutEventsAPI is the part of EventBridge's API the publisher calls.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// maxPutEntries is PutEvents' limit of entries per call.
const maxPutEntries = 10

// EventBridge publishes on an event bus: source notify.Source, the
// detail-type of the catalogue, the event as the detail and its time as
// the event's time. PutEvents has no idempotency key, so a retried batch
// can publish an event twice; the detail's eventId is what consumers
// de-duplicate on.
type EventBridge struct {
	Client PutEventsAPI
	Bus    string // name or ARN
}

// Publish puts es, ten at a time, in order; it stops at the first entry
// the bus refused.
func (b EventBridge) Publish(ctx context.Context, es []notify.Event) (int, error) {
	for i := 0; i < len(es); i += maxPutEntries {
		chunk := es[i:min(i+maxPutEntries, len(es))]
		entries := make([]ebtypes.PutEventsRequestEntry, len(chunk))
		for j, e := range chunk {
			detail, err := json.Marshal(e)
			if err != nil {
				return i + j, fmt.Errorf("event %s: %w", e.EventID, err)
			}
			env := notify.Wrap(e)
			entries[j] = ebtypes.PutEventsRequestEntry{EventBusName: aws.String(b.Bus), Source: aws.String(env.Source),
				DetailType: aws.String(env.DetailType), Detail: aws.String(string(detail)), Time: aws.Time(env.Time)}
		}
		out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			return i, fmt.Errorf("put events on %s: %w", b.Bus, err)
		}
		for j, r := range out.Entries {
			if r.ErrorCode != nil {
				return i + j, fmt.Errorf("put event %s on %s: %s: %s", chunk[j].EventID, b.Bus, aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage))
			}
		}
		if len(out.Entries) != len(chunk) {
			return i, fmt.Errorf("put events on %s: %d results for %d entries", b.Bus, len(out.Entries), len(chunk))
		}
	}
	return len(es), nil
}
