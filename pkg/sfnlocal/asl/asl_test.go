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
	doc := `{"foo": 123, "bar": ["a", "b", "c"], "car": {"cdr": true}, "a b": {"x.y": 1},
	  "items": [{"id": 1, "ok": true, "n": 5}, {"id": 2, "ok": false, "n": 15}, {"id": 3, "n": 25}],
	  "vals": [0, 10, 20, 30, 40, 50]}`
	tests := []struct {
		path string
		want string // JSON, or "!message" for an error containing message
	}{
		{"$", ""}, // the whole document
		{"$.foo", `123`},
		{"$.bar", `["a","b","c"]`},
		{"$.car.cdr", `true`},
		{"$['car']['cdr']", `true`},
		{`$["car"].cdr`, `true`},
		{"$.bar[0]", `"a"`},
		{"$.bar[-1]", `"c"`},
		{"$['a b']['x.y']", `1`},
		{"$.vals[-3:]", `[30,40,50]`},          // the specification's Parameters example
		{"$.vals[1:3]", `[10,20]`},             // slice
		{"$.vals[::2]", `[0,20,40]`},           // slice with step
		{"$.vals[0,2]", `[0,20]`},              // union of indexes
		{"$.bar[*]", `["a","b","c"]`},          // wildcard
		{"$.car.*", `[true]`},                  // wildcard on an object
		{"$.items[*].id", `[1,2,3]`},           // indefinite: a list
		{"$.items[?(@.ok == true)].id", `[1]`}, // filter
		{"$.items[?(@.n > 10)].id", `[2,3]`},   // numeric filter
		{"$.items[?(@.ok)].id", `[1,2]`},       // existence filter
		{"$.items[?(@.n >= 5 && @.n < 25)].id", `[1,2]`},
		{"$.items[?(@.id == 1 || @.id == 3)].n", `[5,25]`},
		{"$..cdr", `[true]`},         // deep scan
		{"$.items[*].missing", `[]`}, // indefinite paths select an empty list
		{"$.nope", "!No results for path: $['nope']"},
		{"$.nope.deeper", "!Missing property in path $['nope']"},
		{"$.foo.bar", "!Expected to find an object with property ['bar'] in path $['foo'] but found 'number'"},
		{"$.bar[7]", "!Index out of bounds"},
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
	for _, s := range []string{"", "foo", "$.", "$..", "$[", "$[1", "$['a", "$.a[?(@.x ~ 1)]", "$.length()", "$[::0]", "$.a[?(x)]", "$ .a"} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("ParsePath(%q) accepted", s)
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
		{`{"a":[1,2]}`, "$.a[1]", `9`, `{"a":[1,9]}`},
		{`"text"`, "$.a", `1`, "!ResultPathMatchFailure"},       // input not an object
		{`{"a":5}`, "$.a.b", `1`, "!ResultPathMatchFailure"},    // through a number
		{`{"a":[1]}`, "$.a[3]", `1`, "!ResultPathMatchFailure"}, // index out of range
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
	context := mustDecode(t, `{"Execution":{"Id":"arn:exec","Name":"run-1"},"State":{"Name":"S"},"Map":{"Item":{"Index":2,"Value":"c"}}}`)
	tests := []struct {
		name, template, input, want string
	}{
		{ // The specification's Parameters example.
			"spec example",
			`{"flagged": true, "parts": {"first.$": "$.vals[0]", "last3.$": "$.vals[-3:]"}}`,
			`{"flagged": 7, "vals": [0, 10, 20, 30, 40, 50]}`,
			`{"flagged": true, "parts": {"first": 0, "last3": [30, 40, 50]}}`,
		},
		{"context object", `{"exec.$": "$$.Execution.Id", "state.$": "$$.State.Name", "ctx.$": "$$.Execution"}`, `{}`,
			`{"exec":"arn:exec","state":"S","ctx":{"Id":"arn:exec","Name":"run-1"}}`},
		{"map item", `{"index.$": "$$.Map.Item.Index", "value.$": "$$.Map.Item.Value"}`, `{}`, `{"index":2,"value":"c"}`},
		{"inside arrays", `{"list": [{"a.$": "$.x"}, 1, "$.x"]}`, `{"x": "X"}`, `{"list":[{"a":"X"},1,"$.x"]}`},
		{"intrinsic", `{"msg.$": "States.Format('Hello, {}!', $.name)"}`, `{"name":"World"}`, `{"msg":"Hello, World!"}`},
		{"constant", `{"a": {"b": [1, 2]}}`, `{}`, `{"a":{"b":[1,2]}}`},
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
	for _, tt := range []struct{ template, want string }{
		{`{"a.$": 5}`, "The value for the field 'a.$' must be a valid JSONPath or a valid intrinsic function call"},
		{`{"a.$": "plain"}`, "The value for the field 'a.$'"},
		{`{"a.$": "$.["}`, "The value for the field 'a.$'"},
		{`{"a.$": "States.Nope(1)"}`, "unknown intrinsic function"},
		{`{"a.$": "States.ArrayLength()"}`, "States.ArrayLength takes 1 arguments"},
	} {
		if _, err := CompileTemplate(mustDecode(t, tt.template)); err == nil || !strings.Contains(err.Error(), tt.want) {
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
