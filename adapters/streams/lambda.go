package streams

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// FromLambda turns the records of a DynamoDB stream event, as Lambda
// delivers them, into Records. An image that does not convert is an error
// naming the record: the batch is delivered again rather than a change lost.
func FromLambda(ev events.DynamoDBEvent) ([]Record, error) {
	out := make([]Record, 0, len(ev.Records))
	for _, r := range ev.Records {
		oldImg, err := convertMap(r.Change.OldImage)
		if err != nil {
			return nil, fmt.Errorf("record %s: old image: %w", r.EventID, err)
		}
		newImg, err := convertMap(r.Change.NewImage)
		if err != nil {
			return nil, fmt.Errorf("record %s: new image: %w", r.EventID, err)
		}
		keys, err := convertMap(r.Change.Keys)
		if err != nil {
			return nil, fmt.Errorf("record %s: keys: %w", r.EventID, err)
		}
		out = append(out, Record{EventName: r.EventName, SequenceNumber: r.Change.SequenceNumber, Keys: keys, Old: oldImg, New: newImg})
	}
	return out, nil
}

func convertMap(m map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		c, err := convert(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// convert maps aws-lambda-go's attribute value onto the SDK's.
func convert(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		var l []types.AttributeValue
		for _, x := range v.List() {
			c, err := convert(x)
			if err != nil {
				return nil, err
			}
			l = append(l, c)
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case events.DataTypeMap:
		m, err := convertMap(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %v", v.DataType())
}

// ToLambda is the reverse of FromLambda's conversion: an item as the Lambda
// runtime presents it, for the tests of stream consumers.
func ToLambda(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := map[string]events.DynamoDBAttributeValue{}
	for k, v := range m {
		out[k] = toLambdaValue(v)
	}
	return out
}

func toLambdaValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(ToLambda(x.Value))
	case *types.AttributeValueMemberL:
		var l []events.DynamoDBAttributeValue
		for _, e := range x.Value {
			l = append(l, toLambdaValue(e))
		}
		return events.NewListAttribute(l)
	}
	panic(fmt.Sprintf("streams.ToLambda: attribute type %T", v))
}
