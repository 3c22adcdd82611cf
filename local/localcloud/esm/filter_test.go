package esm

import (
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	insertA := `{"eventName":"INSERT","dynamodb":{"NewImage":{"kind":{"S":"a"},"n":{"N":"3"}}}}`
	modifyB := `{"eventName":"MODIFY","dynamodb":{"NewImage":{"kind":{"S":"b"}}}}`
	tags := `{"eventName":"INSERT","tags":["x","y"],"count":2}`
	cases := []struct {
		name    string
		filters []string
		record  string
		passes  bool
	}{
		{name: "no filter", record: modifyB, passes: true},
		{name: "event name", filters: []string{`{"eventName":["INSERT"]}`}, record: insertA, passes: true},
		{name: "other event name", filters: []string{`{"eventName":["INSERT"]}`}, record: modifyB},
		{name: "one of the values", filters: []string{`{"eventName":["REMOVE","MODIFY"]}`}, record: modifyB, passes: true},
		{name: "nested key", filters: []string{`{"dynamodb":{"NewImage":{"kind":{"S":["a"]}}}}`}, record: insertA, passes: true},
		{name: "nested key differs", filters: []string{`{"dynamodb":{"NewImage":{"kind":{"S":["a"]}}}}`}, record: modifyB},
		{name: "every key must match", filters: []string{`{"eventName":["INSERT"],"dynamodb":{"NewImage":{"kind":{"S":["b"]}}}}`}, record: insertA},
		{name: "a missing key", filters: []string{`{"dynamodb":{"OldImage":{"kind":{"S":["a"]}}}}`}, record: insertA},
		{name: "any filter", filters: []string{`{"eventName":["REMOVE"]}`, `{"eventName":["MODIFY"]}`}, record: modifyB, passes: true},
		{name: "array value: one element", filters: []string{`{"tags":["y"]}`}, record: tags, passes: true},
		{name: "a number", filters: []string{`{"count":[2]}`}, record: tags, passes: true},
		{name: "a number is not its string", filters: []string{`{"count":["2"]}`}, record: tags},
		{name: "a leaf is no object", filters: []string{`{"dynamodb":{"NewImage":["x"]}}`}, record: insertA},
	}
	for _, c := range cases {
		f, err := compileFilters(c.filters)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := f.passes([]byte(c.record)); got != c.passes {
			t.Errorf("%s: passes %v, want %v", c.name, got, c.passes)
		}
	}
}

// Patterns beyond exact values are refused, not half-matched.
func TestFilter_Refused(t *testing.T) {
	cases := map[string]string{
		`{"eventName":[{"prefix":"IN"}]}`:                   "[prefix] is not supported",
		`{"n":[{"numeric":[">",1]}]}`:                       "[numeric] is not supported",
		`{"eventName":[{"anything-but":["REMOVE"]}]}`:       "[anything-but] is not supported",
		`{"dynamodb":{"NewImage":{"x":[{"exists":true}]}}}`: "[exists] is not supported",
		`{"eventName":"INSERT"}`:                            "objects or arrays",
		`{"eventName":[]}`:                                  "empty array",
		`{}`:                                                "empty pattern",
		`["INSERT"]`:                                        "not a JSON object",
	}
	for src, want := range cases {
		if _, err := compilePattern(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", src, err, want)
		}
	}
}
