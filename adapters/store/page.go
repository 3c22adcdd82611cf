package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/core/page"
)

// DefaultPageSize is the page size when a caller asks for 0 items.
const DefaultPageSize = 100

func pageLimit(limit int) *int32 {
	if limit <= 0 || limit > 1000 {
		limit = DefaultPageSize
	}
	l := int32(limit)
	return &l
}

// encodeToken turns DynamoDB's LastEvaluatedKey (strings and numbers only:
// every key of our tables is a string) into an opaque URL-safe token.
func encodeToken(key map[string]types.AttributeValue) string {
	if len(key) == 0 {
		return ""
	}
	m := make(map[string]string, len(key))
	for k, v := range key {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			m[k] = s.Value
		}
	}
	b, _ := json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken is the ExclusiveStartKey of a token; "" is the first page.
func decodeToken(token string) (map[string]types.AttributeValue, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	var m map[string]string
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || len(m) == 0 {
		return nil, fmt.Errorf("%w: %q", page.ErrBadToken, token)
	}
	key := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		key[k] = str(v)
	}
	return key, nil
}
