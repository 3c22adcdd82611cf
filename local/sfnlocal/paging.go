package sfnlocal

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// paginate returns one page of items. Tokens are opaque to clients: the base64 of the
// operation and the offset of the next item.
func paginate[T any](items []T, maxResults int32, nextToken *string, tokenMax int, op string) ([]T, string, error) {
	if maxResults < 0 || maxResults > 1000 {
		return nil, "", apiErr(errValidation, "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000", maxResults)
	}
	size := int(maxResults)
	if size == 0 {
		size = 100
	}
	start := 0
	if nextToken != nil {
		if len(*nextToken) > tokenMax {
			return nil, "", apiErr(errValidation, "1 validation error detected: Value '%s' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to %d", *nextToken, tokenMax)
		}
		n, ok := decodePageToken(*nextToken, op)
		if !ok || n > len(items) {
			return nil, "", apiErr(errInvalidToken, "Invalid Token: '%s'", *nextToken)
		}
		start = n
	}
	end := min(len(items), start+size)
	next := ""
	if end < len(items) {
		next = base64.StdEncoding.EncodeToString([]byte(op + ":" + strconv.Itoa(end)))
	}
	return items[start:end], next, nil
}

func decodePageToken(token, op string) (int, bool) {
	raw, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	prefix, offset, ok := strings.Cut(string(raw), ":")
	if !ok || prefix != op {
		return 0, false
	}
	n, err := strconv.Atoi(offset)
	return n, err == nil && n >= 0
}

// sameJSON compares two configuration values by their JSON form.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
