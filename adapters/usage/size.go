package usage

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize is the size of an item as DynamoDB counts it for its read and
// write units: per attribute the UTF-8 length of its name plus the size of
// its value.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// ItemsSize is the sum of the items' sizes.
func ItemsSize(items []map[string]types.AttributeValue) int {
	n := 0
	for _, it := range items {
		n += ItemSize(it)
	}
	return n
}

// valueSize follows DynamoDB's rules: a string or binary its length, a
// number about one byte per two significant digits plus one, a boolean or
// null one byte, a list or map 3 bytes plus one per element beside the
// elements themselves.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize: leading and trailing zeros are not stored.
func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.Replace(s, ".", "", 1)
		s = strings.TrimLeft(s, "0")
	}
	digits := len(strings.TrimRight(s, "0"))
	return (digits+1)/2 + 1
}
