package asl

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestPath_Get(t *testing.T) {
	// The first rows are the specification's Reference Path examples.
	doc := `{"foo": 123, "bar": ["a", "b", "c"], "car": {"cdr": true}, "a b": {"x.y": 1}, "list": [{"id": 1}]}`
	tests := []struct {
		path string
		want string // JSON, or "!message" for an error containing message
	}{
		{path: "$", want: ""}, // the whole document
		{path: "$.foo", want: `123`},
		{path: "$.bar", want: `["a","b","c"]`},
		{path: "$.car.cdr", want: `true`},
		{path: "$.nope", want: "!No results for path: $['nope']"},
		{path: "$.nope.deeper", want: "!Missing property in path $['nope']"},
		{path: "$.foo.bar", want: "!Expected to find an object with property ['bar'] in path $['foo'] but found 'number'"},
	}
	root := mustDecode(t, doc)
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := ParsePath(tt.path)
			if err != nil {
				t.Fatalf("ParsePath: %v", err)
			}
			got, err := p.Get(root)
			if strings.HasPrefix(tt.want, "!") {
				var pe *PathError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want[1:]) {
					t.Fatalf("err = %v, want %q", err, tt.want[1:])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := root
			if tt.want != "" {
				want = mustDecode(t, tt.want)
			}
			if !Equal(got, want) {
				t.Errorf("got %s, want %s", Encode(got), Encode(want))
			}
		})
	}
}

func TestParsePath_Invalid(t *testing.T) {
	for _, s := range []string{"", "foo", "$.", "$.length()", "$ .a", "$.a b"} {
		if _, err := ParsePath(s); err == nil || isUnimplemented(err) {
			t.Errorf("ParsePath(%q) = %v, want a syntax error", s, err)
		}
	}
}

// The JsonPath syntax that the service accepts and sfnlocal does not is refused naming
// the feature.
func TestParsePath_Unimplemented(t *testing.T) {
	for s, feature := range map[string]string{
		"$.a[*]":            "wildcards",
		"$.a.*":             "wildcards",
		"$..a":              "recursive descent",
		"$.a[?(@.b == 1)]":  "filters",
		"$.a[-1]":           "negative indexes",
		"$.a[1:3]":          "slices",
		"$.a[:2]":           "slices",
		"$.a[0,2]":          "unions",
		"$['a','b']":        "unions",
		"$$.Map.Item[*].id": "wildcards",
		"$['a b']":          "bracket notation and array indexes",
		`$["x"]`:            "bracket notation and array indexes",
		"$.a[0]":            "bracket notation and array indexes",
		"$.list[0].id":      "bracket notation and array indexes",
	} {
		_, err := ParsePath(s)
		if !isUnimplemented(err) || !strings.Contains(err.Error(), "JSONPath "+feature) || !strings.Contains(err.Error(), "is not implemented by sfnlocal") {
			t.Errorf("ParsePath(%q) = %v, want %s refused", s, err, feature)
		}
	}
}

func TestPath_Set(t *testing.T) {
	tests := []struct {
		input, path, result, want string
	}{
		{input: `{"a":1}`, path: "$.b", result: `2`, want: `{"a":1,"b":2}`},
		{input: `{"a":1}`, path: "$.a", result: `2`, want: `{"a":2}`},
		{input: `{"a":1}`, path: "$.x.y.z", result: `true`, want: `{"a":1,"x":{"y":{"z":true}}}`}, // missing objects are created
		{input: `{"a":{"b":1}}`, path: "$.a.c", result: `2`, want: `{"a":{"b":1,"c":2}}`},
		{input: `"text"`, path: "$.a", result: `1`, want: "!ResultPathMatchFailure"},      // input not an object
		{input: `{"a":5}`, path: "$.a.b", result: `1`, want: "!ResultPathMatchFailure"},   // through a number
		{input: `{"a":[1]}`, path: "$.a.b", result: `1`, want: "!ResultPathMatchFailure"}, // through an array
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.input, func(t *testing.T) {
			input := mustDecode(t, tt.input)
			before := Encode(input)
			got, err := MustParsePath(tt.path).Set(input, mustDecode(t, tt.result))
			if strings.HasPrefix(tt.want, "!") {
				var e *Error
				if !errors.As(err, &e) || e.Name != ErrorResultPathMatchFailure {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, mustDecode(t, tt.want)) {
				t.Errorf("got %s, want %s", Encode(got), tt.want)
			}
			if Encode(input) != before {
				t.Errorf("Set modified its input: %s", Encode(input))
			}
		})
	}
}

func TestPathField_ResultPath(t *testing.T) {
	// The ResultPath examples of the specification and the service's documentation.
	input := mustDecode(t, `{"comment":"An input comment.","data":{"val1":23,"val2":17}}`)
	result := mustDecode(t, `"Hello, AWS Step Functions!"`)
	tests := []struct {
		name  string
		field PathField
		want  string
	}{
		{name: "absent replaces the input", field: PathField{}, want: `"Hello, AWS Step Functions!"`},
		{name: "$ replaces the input", field: PathField{Path: MustParsePath("$")}, want: `"Hello, AWS Step Functions!"`},
		{name: "null discards the result", field: PathField{Null: true}, want: Encode(input)},
		{name: "a path adds the result", field: PathField{Path: MustParsePath("$.taskresult")}, want: `{"comment":"An input comment.","data":{"val1":23,"val2":17},"taskresult":"Hello, AWS Step Functions!"}`},
		{name: "a nested path", field: PathField{Path: MustParsePath("$.data.result")}, want: `{"comment":"An input comment.","data":{"result":"Hello, AWS Step Functions!","val1":23,"val2":17}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.field.Merge(input, result)
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, mustDecode(t, tt.want)) {
				t.Errorf("got %s, want %s", Encode(got), tt.want)
			}
		})
	}
}

func TestTemplate_Eval(t *testing.T) {
	context := mustDecode(t, `{"Execution":{"Id":"arn:exec","Name":"run-1"},"State":{"Name":"S"},"Task":{"Token":"tok"}}`)
	tests := []struct {
		name, template, input, want string
	}{
		{ // The rollout state machine's Parameters.
			name:     "rollout",
			template: `{"FunctionName": "engine", "Payload": {"task": "park", "rolloutId.$": "$.rolloutId", "executionArn.$": "$$.Execution.Id", "taskToken.$": "$$.Task.Token"}}`,
			input:    `{"rolloutId": "r-1", "other": 7}`,
			want:     `{"FunctionName": "engine", "Payload": {"task": "park", "rolloutId": "r-1", "executionArn": "arn:exec", "taskToken": "tok"}}`,
		},
		{name: "context object", template: `{"exec.$": "$$.Execution.Id", "token.$": "$$.Task.Token"}`, input: `{}`,
			want: `{"exec":"arn:exec","token":"tok"}`},
		{name: "whole input", template: `{"all.$": "$"}`, input: `{"a":[1]}`, want: `{"all":{"a":[1]}}`},
		{name: "nested objects", template: `{"a": {"b": {"c.$": "$.x"}, "d": 1}}`, input: `{"x": "X"}`, want: `{"a":{"b":{"c":"X"},"d":1}}`},
		{name: "constant", template: `{"a": {"b": "c"}}`, input: `{}`, want: `{"a":{"b":"c"}}`},
		{name: "not an object", template: `"plain"`, input: `{}`, want: `"plain"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := CompileTemplate(mustDecode(t, tt.template))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Eval(mustDecode(t, tt.input), context)
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, mustDecode(t, tt.want)) {
				t.Errorf("got %s, want %s", Encode(got), tt.want)
			}
		})
	}
}

func TestTemplate_Errors(t *testing.T) {
	for _, tt := range []struct {
		template, want string
		unimplemented  bool
	}{
		{template: `{"a.$": 5}`, want: "The value for the field 'a.$' must be a valid JSONPath or a valid intrinsic function call", unimplemented: false},
		{template: `{"a.$": "plain"}`, want: "The value for the field 'a.$'", unimplemented: false},
		{template: `{"a.$": "$.["}`, want: "The value for the field 'a.$'", unimplemented: false},
		{template: `{"a.$": "States.Format('{}', $.x)"}`, want: "intrinsic function States.Format is not implemented by sfnlocal", unimplemented: true},
		{template: `{"a": {"b.$": "States.UUID()"}}`, want: "intrinsic function States.UUID is not implemented by sfnlocal", unimplemented: true},
		{template: `{"a.$": "$.items[*].id"}`, want: "JSONPath wildcards", unimplemented: true},
		{template: `{"list": [{"a.$": "$.x"}, 1]}`, want: "an array in a payload template is not implemented by sfnlocal", unimplemented: true},
		{template: `{"a": {"b": [1, 2]}}`, want: "an array in a payload template", unimplemented: true},
		{template: `{"s.$": "$$.State.Name"}`, want: "the context object path $$.State.Name is not implemented by sfnlocal (it implements $$.Execution.Id and $$.Task.Token)", unimplemented: true},
		{template: `{"e.$": "$$.Execution"}`, want: "the context object path $$.Execution is not implemented", unimplemented: true},
	} {
		_, err := CompileTemplate(mustDecode(t, tt.template))
		var te *TemplateError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), tt.want) || (te.Unimplemented != nil) != tt.unimplemented {
			t.Errorf("CompileTemplate(%s) = %v, want %q", tt.template, err, tt.want)
		}
	}
	tpl, _ := CompileTemplate(mustDecode(t, `{"value.$": "$.no_such_jsonpath"}`))
	_, err := tpl.Eval(mustDecode(t, `{"a":1}`), nil)
	var e *Error
	if !errors.As(err, &e) || e.Name != ErrorRuntime ||
		e.Cause != `The JSONPath '$.no_such_jsonpath' specified for the field 'value.$' could not be found in the input '{"a":1}'` {
		t.Errorf("err = %#v", err)
	}
}

func TestChoiceRule_Eval(t *testing.T) {
	in := mustDecode(t, `{"type":"Private","value":22}`)
	tests := []struct {
		rule string
		want bool
	}{
		{rule: `{"Variable":"$.type","StringEquals":"Private","Next":"X"}`, want: true},
		{rule: `{"Variable":"$.type","StringEquals":"private","Next":"X"}`, want: false},
		{rule: `{"Variable":"$.value","StringEquals":"22","Next":"X"}`, want: false}, // mismatched types compare false
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c := &checker{}
			r := c.parseChoiceRule(mustDecode(t, tt.rule), "/States/C/Choices/0", "C")
			if len(c.problems) > 0 {
				t.Fatalf("problems: %v", c.problems)
			}
			got, err := r.Eval(in)
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	// A missing Variable is a runtime error.
	c := &checker{}
	r := c.parseChoiceRule(mustDecode(t, `{"Variable":"$.missing","StringEquals":"x","Next":"X"}`), "", "C")
	_, err := r.Eval(in)
	var e *Error
	if !errors.As(err, &e) || e.Name != ErrorRuntime || !strings.Contains(e.Cause, "Invalid path '$.missing'") {
		t.Errorf("missing variable: %v", err)
	}
}

func TestParseTimestamp(t *testing.T) {
	for s, ok := range map[string]bool{
		"2016-03-14T01:59:00Z":      true,
		"2016-03-14T01:59:00.123Z":  true,
		"2016-03-14T01:59:00+01:00": true,
		"2016-03-14t01:59:00Z":      false, // lowercase t
		"2016-03-14T01:59:00z":      false, // lowercase z
		"2016-03-14 01:59:00Z":      false,
		"2016-03-14T01:59:00":       false, // no offset
		"2016-13-05T21:29:29Z":      false,
		"2016-12-05T25:29:29Z":      false,
		"05-12-2016T21:29:29Z":      false,
	} {
		if _, err := ParseTimestamp(s); (err == nil) != ok {
			t.Errorf("ParseTimestamp(%q) err = %v", s, err)
		}
	}
}

func TestRetrier_Delay(t *testing.T) {
	tests := []struct {
		r    Retrier
		want []time.Duration // delays before retries 1, 2, 3, ...
	}{
		{r: Retrier{IntervalSeconds: 1, BackoffRate: 2}, want: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}}, // the defaults
		{r: Retrier{IntervalSeconds: 3, BackoffRate: 2, MaxDelaySeconds: 10}, want: []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second}},
		{r: Retrier{IntervalSeconds: 2, BackoffRate: 1}, want: []time.Duration{2 * time.Second, 2 * time.Second}},                                // constant
		{r: Retrier{IntervalSeconds: 1, BackoffRate: 1.5}, want: []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond}}, // fractional
	}
	for _, tt := range tests {
		for i, want := range tt.want {
			if got := tt.r.Delay(i + 1); got != want {
				t.Errorf("%+v: Delay(%d) = %v, want %v", tt.r, i+1, got, want)
			}
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		equals []string
		name   string
		want   bool
	}{
		{equals: []string{"MyError"}, name: "MyError", want: true},
		{equals: []string{"MyError"}, name: "Other", want: false},
		{equals: []string{ErrorAll}, name: "Anything", want: true},
		{equals: []string{ErrorAll}, name: ErrorTimeout, want: true},
		{equals: []string{ErrorTaskFailed}, name: "Lambda.ServiceException", want: true},
		{equals: []string{ErrorTaskFailed}, name: ErrorTimeout, want: false}, // TaskFailed matches every name but States.Timeout
		{equals: []string{ErrorTaskFailed}, name: ErrorHeartbeatTimeout, want: true},
		{equals: []string{ErrorTimeout, "X"}, name: "X", want: true},
	}
	for _, tt := range tests {
		if got := Matches(tt.equals, tt.name); got != tt.want {
			t.Errorf("Matches(%v, %s) = %v", tt.equals, tt.name, got)
		}
	}
}
