package esm

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// record is one stream record as the function receives it.
type record struct {
	json    json.RawMessage // an events.DynamoDBEventRecord
	seq     string
	created time.Time // ApproximateCreationDateTime: the record's age
	keyHash uint32    // picks the lane: one item's records share one
	shard   string
}

// toLambda builds the record Lambda delivers for a stream record:
// eventSourceARN is the template's stream ARN (not the ARN the stream has
// in DynamoDB Local), awsRegion the template's region.
func toLambda(r stypes.Record, streamARN, region, shard string) (record, error) {
	d := r.Dynamodb
	if d == nil {
		return record{}, fmt.Errorf("record %s has no dynamodb part", aws.ToString(r.EventID))
	}
	ev := events.DynamoDBEventRecord{
		AWSRegion:      region,
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    "aws:dynamodb",
		EventVersion:   "1.1",
		EventSourceArn: streamARN,
		Change: events.DynamoDBStreamRecord{
			Keys:           image(d.Keys),
			NewImage:       image(d.NewImage),
			OldImage:       image(d.OldImage),
			SequenceNumber: aws.ToString(d.SequenceNumber),
			SizeBytes:      aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
		},
	}
	if d.ApproximateCreationDateTime != nil {
		ev.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
	}
	if r.UserIdentity != nil {
		// TTL deletions: the service is the principal.
		ev.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(r.UserIdentity.Type), PrincipalID: aws.ToString(r.UserIdentity.PrincipalId)}
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return record{}, err
	}
	return record{json: raw, seq: ev.Change.SequenceNumber, created: ev.Change.ApproximateCreationDateTime.Time, keyHash: keyHash(d.Keys), shard: shard}, nil
}

func image(m map[string]stypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = value(v)
	}
	return out
}

// value maps the Streams API's attribute value onto aws-lambda-go's,
// which marshals as DynamoDB JSON ({"S":"x"}), as Lambda delivers it.
func value(v stypes.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *stypes.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *stypes.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *stypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value)
	case *stypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *stypes.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *stypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	case *stypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(x.Value)
	case *stypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(x.Value)
	case *stypes.AttributeValueMemberM:
		return events.NewMapAttribute(image(x.Value))
	case *stypes.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, 0, len(x.Value))
		for _, e := range x.Value {
			l = append(l, value(e))
		}
		return events.NewListAttribute(l)
	}
	return events.NewNullAttribute()
}

// keyHash hashes an item's key (its attributes in DynamoDB JSON, which
// marshals map keys sorted).
func keyHash(keys map[string]stypes.AttributeValue) uint32 {
	b, _ := json.Marshal(image(keys))
	h := fnv.New32a()
	_, _ = h.Write(b)
	return h.Sum32()
}

// eventJSON is the invocation's payload: {"Records":[...]}.
func eventJSON(recs []record) []byte {
	out := []byte(`{"Records":[`)
	for i, r := range recs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r.json...)
	}
	return append(out, "]}"...)
}
