package agentevent

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/agent"
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

// FromLambdaEvent turns the records of a DynamoDB stream event, as Lambda
// delivers them, into changes. A record that does not decode is an error:
// the batch is delivered again rather than a change lost.
func FromLambdaEvent(decode Decoder, ev events.DynamoDBEvent) ([]Change, error) {
	out := make([]Change, 0, len(ev.Records))
	for _, r := range ev.Records {
		oldImg, err := convertMap(r.Change.OldImage)
		if err != nil {
			return nil, fmt.Errorf("record %s: old image: %w", r.EventID, err)
		}
		newImg, err := convertMap(r.Change.NewImage)
		if err != nil {
			return nil, fmt.Errorf("record %s: new image: %w", r.EventID, err)
		}
		c, err := FromImages(decode, oldImg, newImg)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", r.EventID, err)
		}
		out = append(out, c)
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
