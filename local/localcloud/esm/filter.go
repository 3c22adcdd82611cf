package esm

import (
	"encoding/json"
	"fmt"
	"sort"
)

// pattern is a compiled filter pattern, in the subset of Lambda's event
// filtering syntax the local cloud supports: objects of keys whose leaves
// are arrays of exact values, {"eventName":["INSERT"]} or
// {"dynamodb":{"NewImage":{"kind":{"S":["a","b"]}}}}. A record matches
// when every key of the pattern matches: a leaf when the record's value
// (or one element of it, when it is an array) equals one of the values.
// No maintained Go matcher of these patterns is available here, so the
// operators (prefix, numeric, anything-but, exists, ...) are refused
// rather than half-implemented.
type pattern map[string]any // value: pattern or []any of exact values

func compilePattern(src string) (pattern, error) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(src), &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return compileObject(raw)
}

func compileObject(raw map[string]any) (pattern, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("an empty pattern matches nothing in Lambda's filtering")
	}
	p := pattern{}
	for k, v := range raw {
		switch v := v.(type) {
		case map[string]any:
			sub, err := compileObject(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			p[k] = sub
		case []any:
			if len(v) == 0 {
				return nil, fmt.Errorf("%s: an empty array matches nothing", k)
			}
			for _, e := range v {
				if _, isOperator := e.(map[string]any); isOperator {
					return nil, fmt.Errorf("%s: the operator %s is not supported by the local cloud (exact values only)", k, operatorName(e.(map[string]any)))
				}
				if _, isArray := e.([]any); isArray {
					return nil, fmt.Errorf("%s: nested arrays are not a pattern", k)
				}
			}
			p[k] = v
		default:
			return nil, fmt.Errorf("%s: a pattern's values are objects or arrays, not %v", k, v)
		}
	}
	return p, nil
}

func operatorName(op map[string]any) string {
	names := make([]string, 0, len(op))
	for k := range op {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprint(names)
}

// matches says whether a record (decoded JSON) matches the pattern.
func (p pattern) matches(rec map[string]any) bool {
	for k, want := range p {
		got, ok := rec[k]
		if !ok {
			return false
		}
		switch want := want.(type) {
		case pattern:
			obj, isObj := got.(map[string]any)
			if !isObj || !want.matches(obj) {
				return false
			}
		case []any:
			if !anyEqual(got, want) {
				return false
			}
		}
	}
	return true
}

// anyEqual: the value, or one of its elements when it is an array, is one
// of the wanted values (JSON numbers compare as numbers).
func anyEqual(got any, want []any) bool {
	values := []any{got}
	if arr, ok := got.([]any); ok {
		values = arr
	}
	for _, v := range values {
		for _, w := range want {
			if v == w {
				return true
			}
		}
	}
	return false
}

// filter is a mapping's filters: a record passes when one matches, and
// every record passes without filters.
type filter []pattern

func compileFilters(srcs []string) (filter, error) {
	var f filter
	for _, s := range srcs {
		p, err := compilePattern(s)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", s, err)
		}
		f = append(f, p)
	}
	return f, nil
}

func (f filter) passes(recJSON []byte) bool {
	if len(f) == 0 {
		return true
	}
	var rec map[string]any
	if json.Unmarshal(recJSON, &rec) != nil {
		return false
	}
	for _, p := range f {
		if p.matches(rec) {
			return true
		}
	}
	return false
}
