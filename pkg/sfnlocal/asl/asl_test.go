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
		{"$", ""}, // the whole document
		{"$.foo", `123`},
		{"$.bar", `["a","b","c"]`},
		{"$.car.cdr", `true`},
		{"$.nope", "!No results for path: $['nope']"},
		{"$.nope.deeper", "!Missing property in path $['nope']"},
		{"$.foo.bar", "!Expected to find an object with property ['bar'] in path $['foo'] but found 'number'"},
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
		{`{"a":1}`, "$.b", `2`, `{"a":1,"b":2}`},
		{`{"a":1}`, "$.a", `2`, `{"a":2}`},
		{`{"a":1}`, "$.x.y.z", `true`, `{"a":1,"x":{"y":{"z":true}}}`}, // missing objects are created
		{`{"a":{"b":1}}`, "$.a.c", `2`, `{"a":{"b":1,"c":2}}`},
		{`"text"`, "$.a", `1`, "!ResultPathMatchFailure"},      // input not an object
		{`{"a":5}`, "$.a.b", `1`, "!ResultPathMatchFailure"},   // through a number
		{`{"a":[1]}`, "$.a.b", `1`, "!ResultPathMatchFailure"}, // through an array
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
		{"absent replaces the input", PathField{}, `"Hello, AWS Step Functions!"`},
		{"$ replaces the input", PathField{Path: MustParsePath("$")}, `"Hello, AWS Step Functions!"`},
		{"null discards the result", PathField{Null: true}, Encode(input)},
		{"a path adds the result", PathField{Path: MustParsePath("$.taskresult")}, `{"comment":"An input comment.","data":{"val1":23,"val2":17},"taskresult":"Hello, AWS Step Functions!"}`},
		{"a nested path", PathField{Path: MustParsePath("$.data.result")}, `{"comment":"An input comment.","data":{"result":"Hello, AWS Step Functions!","val1":23,"val2":17}}`},
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
			"rollout",
			`{"FunctionName": "engine", "Payload": {"task": "park", "rolloutId.$": "$.rolloutId", "executionArn.$": "$$.Execution.Id", "taskToken.$": "$$.Task.Token"}}`,
			`{"rolloutId": "r-1", "other": 7}`,
			`{"FunctionName": "engine", "Payload": {"task": "park", "rolloutId": "r-1", "executionArn": "arn:exec", "taskToken": "tok"}}`,
		},
		{"context object", `{"exec.$": "$$.Execution.Id", "token.$": "$$.Task.Token"}`, `{}`,
			`{"exec":"arn:exec","token":"tok"}`},
		{"whole input", `{"all.$": "$"}`, `{"a":[1]}`, `{"all":{"a":[1]}}`},
		{"nested objects", `{"a": {"b": {"c.$": "$.x"}, "d": 1}}`, `{"x": "X"}`, `{"a":{"b":{"c":"X"},"d":1}}`},
		{"constant", `{"a": {"b": "c"}}`, `{}`, `{"a":{"b":"c"}}`},
		{"not an object", `"plain"`, `{}`, `"plain"`},
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
		{`{"a.$": 5}`, "The value for the field 'a.$' must be a valid JSONPath or a valid intrinsic function call", false},
		{`{"a.$": "plain"}`, "The value for the field 'a.$'", false},
		{`{"a.$": "$.["}`, "The value for the field 'a.$'", false},
		{`{"a.$": "States.Format('{}', $.x)"}`, "intrinsic function States.Format is not implemented by sfnlocal", true},
		{`{"a": {"b.$": "States.UUID()"}}`, "intrinsic function States.UUID is not implemented by sfnlocal", true},
		{`{"a.$": "$.items[*].id"}`, "JSONPath wildcards", true},
		{`{"list": [{"a.$": "$.x"}, 1]}`, "an array in a payload template is not implemented by sfnlocal", true},
		{`{"a": {"b": [1, 2]}}`, "an array in a payload template", true},
		{`{"s.$": "$$.State.Name"}`, "the context object path $$.State.Name is not implemented by sfnlocal (it implements $$.Execution.Id and $$.Task.Token)", true},
		{`{"e.$": "$$.Execution"}`, "the context object path $$.Execution is not implemented", true},
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
		{`{"Variable":"$.type","StringEquals":"Private","Next":"X"}`, true},
		{`{"Variable":"$.type","StringEquals":"private","Next":"X"}`, false},
		{`{"Variable":"$.value","StringEquals":"22","Next":"X"}`, false}, // mismatched types compare false
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
		{Retrier{IntervalSeconds: 1, BackoffRate: 2}, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}}, // the defaults
		{Retrier{IntervalSeconds: 3, BackoffRate: 2, MaxDelaySeconds: 10}, []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second}},
		{Retrier{IntervalSeconds: 2, BackoffRate: 1}, []time.Duration{2 * time.Second, 2 * time.Second}},                                // constant
		{Retrier{IntervalSeconds: 1, BackoffRate: 1.5}, []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond}}, // fractional
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
		{[]string{"MyError"}, "MyError", true},
		{[]string{"MyError"}, "Other", false},
		{[]string{ErrorAll}, "Anything", true},
		{[]string{ErrorAll}, ErrorTimeout, true},
		{[]string{ErrorTaskFailed}, "Lambda.ServiceException", true},
		{[]string{ErrorTaskFailed}, ErrorTimeout, false}, // TaskFailed matches every name but States.Timeout
		{[]string{ErrorTaskFailed}, ErrorHeartbeatTimeout, true},
		{[]string{ErrorTimeout, "X"}, "X", true},
	}
	for _, tt := range tests {
		if got := Matches(tt.equals, tt.name); got != tt.want {
			t.Errorf("Matches(%v, %s) = %v", tt.equals, tt.name, got)
		}
	}
}
