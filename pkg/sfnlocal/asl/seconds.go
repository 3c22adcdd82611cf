package asl

import (
	"encoding/json"
	"fmt"
	"math/big"
)

// wholeSeconds reads a JSON number that must be an integer (1.5 is refused).
func wholeSeconds(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("not an integer")
	}
	return r.Num().Int64(), nil
}

// IntegerAt reads a non-negative integer through a reference path, for
// TimeoutSecondsPath, HeartbeatSecondsPath and MaxConcurrencyPath. field names the
// path's field in the messages.
func IntegerAt(p *Path, input any, field string) (int64, error) {
	v, err := p.Get(input)
	if err != nil {
		return 0, Runtimef("Invalid path '%s' : %v", p, err)
	}
	n, err := wholeSeconds(v)
	if err != nil || n < 0 {
		return 0, Runtimef("The %s field refers to value %q which is not a valid integer: %s", field, javaString(v), p)
	}
	return n, nil
}
