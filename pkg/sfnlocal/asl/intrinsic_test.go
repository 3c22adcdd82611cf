package asl

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// The expected values come from executions recorded on the service (and the
// specification's examples); see README.md.
func TestIntrinsic_Eval(t *testing.T) {
	context := mustDecode(t, `{"StateMachine":{"Id":"arn:aws:states:us-east-1:1:stateMachine:my-machine-name","Name":"my-machine-name"},"Execution":{"Name":"run"}}`)
	tests := []struct {
		call, input, want string
	}{
		{`States.Format('Formatting argument {}.', $.v)`, `{"v":"HelloWorld"}`, `"Formatting argument HelloWorld."`},
		{`States.Format('Formatting argument {}.', $.v)`, `{"v":null}`, `"Formatting argument null."`},
		{`States.Format('Formatting argument {}.', $.v)`, `{"v":1.1}`, `"Formatting argument 1.1."`},
		{`States.Format('fst={} and snd={}.', $.a, $.b)`, `{"a":{"Arg1":1,"Arg2":[]},"b":[1,"x"]}`, `"fst={Arg1=1, Arg2=[]} and snd=[1, x]."`},
		{`States.Format('Hello, my name is {}.', $.name)`, `{"name":"Arnav"}`, `"Hello, my name is Arnav."`},
		{`States.Format('Escaped \{\} and {}', 'x')`, `{}`, `"Escaped {} and x"`},
		{`States.Format('It\'s {}', 'ok')`, `{}`, `"It's ok"`},
		{`States.StringToJson($.s)`, `{"s":"{\"Arg1\": 1, \"Arg2\": []}"}`, `{"Arg1":1,"Arg2":[]}`},
		{`States.StringToJson($.s)`, `{"s":""}`, `null`},
		{`States.StringToJson($.s)`, `{"s":"1.1"}`, `1.1`},
		{`States.JsonToString($.v)`, `{"v":{"Arg1":1,"Arg2":[]}}`, `"{\"Arg1\":1,\"Arg2\":[]}"`},
		{`States.JsonToString($.v)`, `{"v":"HelloWorld"}`, `"\"HelloWorld\""`},
		{`States.Array('Foo', 2020, $.v, null)`, `{"v":{"a":1}}`, `["Foo",2020,{"a":1},null]`},
		{`States.Array()`, `{}`, `[]`},
		{`States.ArrayPartition($.a, 3)`, `{"a":[0,1,2,3]}`, `[[0,1,2],[3]]`},
		{`States.ArrayContains($.a, $.v)`, `{"a":[[1,2,3],2],"v":[1,2,3]}`, `true`},
		{`States.ArrayContains($.a, $.v)`, `{"a":[],"v":null}`, `false`},
		{`States.ArrayRange(1, 9, 2)`, `{}`, `[1,3,5,7,9]`},
		{`States.ArrayRange(0, 10, 3)`, `{}`, `[0,3,6,9]`},
		{`States.ArrayGetItem($.a, $.i)`, `{"a":[1,2,3,4,5,6,7,8,9],"i":5}`, `6`},
		{`States.ArrayLength($.a)`, `{"a":[1,2,3,4,5,6,7,8,9]}`, `9`},
		{`States.ArrayUnique($.a)`, `{"a":[1,2,3,3,3,3,3,3,4]}`, `[1,2,3,4]`},
		{`States.Base64Encode($.s)`, `{"s":"Data to encode"}`, `"RGF0YSB0byBlbmNvZGU="`},
		{`States.Base64Decode($.s)`, `{"s":"RGF0YSB0byBlbmNvZGU="}`, `"Data to encode"`},
		{`States.Hash($.s, 'SHA-1')`, `{"s":"input data"}`, `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{`States.Hash($.s, 'MD5')`, `{"s":"input data"}`, `"812f45842bc6d66ee14572ce20db8e86"`},
		{`States.Hash($.s, 'SHA-256')`, `{"s":"input data"}`, `"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3"`},
		{`States.JsonMerge($.a, $.b, false)`, `{"a":{"a":{"a1":1,"a2":2},"b":2,"d":3},"b":{"a":{"a3":1,"a4":2},"c":3,"d":4}}`, `{"a":{"a3":1,"a4":2},"b":2,"c":3,"d":4}`},
		{`States.MathAdd($.a, $.b)`, `{"a":-9,"b":3}`, `-6`},
		{`States.MathAdd($.a, $.b)`, `{"a":1.5,"b":1.51}`, `4`},    // each argument is rounded half up
		{`States.MathAdd($.a, $.b)`, `{"a":-1.5,"b":-1.51}`, `-3`}, // -1.5 rounds to -1
		{`States.MathAdd($.a, $.b)`, `{"a":-0.5,"b":0.5}`, `1`},
		{`States.StringSplit($.s, $.d)`, `{"s":"This.is+a,test=string","d":".+,="}`, `["This","is","a","test","string"]`},
		{`States.StringSplit($.s, ',')`, `{"s":",,,,"}`, `[]`},
		{`States.ArrayGetItem(States.StringSplit($$.StateMachine.Name, '-'), States.MathAdd(States.ArrayLength(States.StringSplit($$.StateMachine.Name, '-')), -1))`, `{}`, `"name"`},
		{`States.Format('fst={} and snd={}.', $$.Execution.Name, $$.StateMachine)`, `{}`, `"fst=run and snd={Id=arn:aws:states:us-east-1:1:stateMachine:my-machine-name, Name=my-machine-name}."`},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			f, err := ParseIntrinsic(tt.call)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Eval(mustDecode(t, tt.input), context)
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, mustDecode(t, tt.want)) {
				t.Errorf("got %s, want %s", Encode(got), tt.want)
			}
		})
	}
}

func TestIntrinsic_UUIDAndRandom(t *testing.T) {
	v, err := MustParseIntrinsic(t, `States.UUID()`).Eval(nil, nil)
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(v.(string)) {
		t.Errorf("UUID = %v, %v", v, err)
	}
	a, _ := MustParseIntrinsic(t, `States.MathRandom(1, 999, 7)`).Eval(nil, nil)
	b, _ := MustParseIntrinsic(t, `States.MathRandom(1, 999, 7)`).Eval(nil, nil)
	if !Equal(a, b) {
		t.Errorf("seeded MathRandom differs: %v %v", a, b)
	}
}

func MustParseIntrinsic(t *testing.T, s string) *Intrinsic {
	t.Helper()
	f, err := ParseIntrinsic(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestIntrinsic_Failures(t *testing.T) {
	for _, tt := range []struct{ call, input string }{
		{`States.ArrayGetItem($.a, 5)`, `{"a":[1]}`},
		{`States.ArrayLength($.a)`, `{"a":"no"}`},
		{`States.StringToJson($.s)`, `{"s":"{bad"}`},
		{`States.Format('{} {}', 'one')`, `{}`},
		{`States.Hash('x', 'SHA-3')`, `{}`},
		{`States.MathAdd(2147483647.6, 1)`, `{}`},
		{`States.JsonMerge($.a, $.a, true)`, `{"a":{}}`},
		{`States.ArrayPartition($.a, 0)`, `{"a":[1]}`},
		{`States.Base64Decode('***')`, `{}`},
	} {
		_, err := MustParseIntrinsic(t, tt.call).Eval(mustDecode(t, tt.input), nil)
		var e *Error
		if !errors.As(err, &e) || e.Name != ErrorIntrinsicFailure {
			t.Errorf("%s: err = %v, want States.IntrinsicFailure", tt.call, err)
		}
	}
	// A path argument that selects nothing is a path error (States.Runtime in a state).
	_, err := MustParseIntrinsic(t, `States.ArrayLength($.missing)`).Eval(mustDecode(t, `{}`), nil)
	var pe *PathError
	if !errors.As(err, &pe) {
		t.Errorf("missing path: err = %v", err)
	}
	for _, s := range []string{`States.Format(`, `States.Format('a`, `States.Nope()`, `States.UUID(1)`, `States.Array(1 2)`, `States.Array(foo)`, `States.Array(1) x`} {
		if _, err := ParseIntrinsic(s); err == nil {
			t.Errorf("ParseIntrinsic(%q) accepted", s)
		}
	}
}

func TestChoiceRule_Eval(t *testing.T) {
	input := `{"type":"Private","value":22,"s":"log-2023.txt","t":"2016-03-14T01:59:00Z","b":true,"n":null,"other":22,"star":"a*b"}`
	tests := []struct {
		rule string
		want bool
	}{
		// The specification's examples.
		{`{"Not":{"Variable":"$.type","StringEquals":"Private"},"Next":"X"}`, false},
		{`{"And":[{"Variable":"$.value","NumericGreaterThanEquals":20},{"Variable":"$.value","NumericLessThan":30}],"Next":"X"}`, true},
		{`{"Or":[{"Variable":"$.value","NumericLessThan":20},{"Variable":"$.value","NumericGreaterThan":30}],"Next":"X"}`, false},
		{`{"Variable":"$.value","NumericEquals":22.0,"Next":"X"}`, true},
		{`{"Variable":"$.value","NumericEqualsPath":"$.other","Next":"X"}`, true},
		{`{"Variable":"$.value","NumericLessThanEquals":22,"Next":"X"}`, true},
		{`{"Variable":"$.type","StringLessThan":"Public","Next":"X"}`, true},
		{`{"Variable":"$.type","StringGreaterThanEquals":"Private","Next":"X"}`, true},
		{`{"Variable":"$.type","StringEqualsPath":"$.type","Next":"X"}`, true},
		{`{"Variable":"$.s","StringMatches":"log-*.txt","Next":"X"}`, true},
		{`{"Variable":"$.s","StringMatches":"*.csv","Next":"X"}`, false},
		{`{"Variable":"$.star","StringMatches":"a\\*b","Next":"X"}`, true},
		{`{"Variable":"$.s","StringMatches":"log-\\*","Next":"X"}`, false},
		{`{"Variable":"$.b","BooleanEquals":true,"Next":"X"}`, true},
		{`{"Variable":"$.b","BooleanEqualsPath":"$.b","Next":"X"}`, true},
		{`{"Variable":"$.t","TimestampEquals":"2016-03-14T01:59:00Z","Next":"X"}`, true},
		{`{"Variable":"$.t","TimestampLessThan":"2016-03-14T02:00:00+00:00","Next":"X"}`, true},
		{`{"Variable":"$.t","TimestampGreaterThan":"2016-03-14T02:59:00+02:00","Next":"X"}`, true},
		{`{"Variable":"$.t","TimestampLessThanEqualsPath":"$.t","Next":"X"}`, true},
		{`{"Variable":"$.n","IsNull":true,"Next":"X"}`, true},
		{`{"Variable":"$.value","IsNull":false,"Next":"X"}`, true},
		{`{"Variable":"$.missing","IsPresent":false,"Next":"X"}`, true},
		{`{"Variable":"$.n","IsPresent":true,"Next":"X"}`, true},
		{`{"Variable":"$.value","IsNumeric":true,"Next":"X"}`, true},
		{`{"Variable":"$.type","IsString":true,"Next":"X"}`, true},
		{`{"Variable":"$.b","IsBoolean":true,"Next":"X"}`, true},
		{`{"Variable":"$.t","IsTimestamp":true,"Next":"X"}`, true},
		{`{"Variable":"$.type","IsTimestamp":true,"Next":"X"}`, false},
		// Mismatched types compare false.
		{`{"Variable":"$.type","NumericEquals":1,"Next":"X"}`, false},
		{`{"Variable":"$.value","StringEquals":"22","Next":"X"}`, false},
		{`{"Variable":"$.type","TimestampEquals":"2016-03-14T01:59:00Z","Next":"X"}`, false},
	}
	in := mustDecode(t, input)
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c := &checker{}
			r := c.parseChoiceRule(mustDecode(t, tt.rule), "/States/C/Choices/0", true)
			if len(c.problems) > 0 {
				t.Fatalf("problems: %v", c.problems)
			}
			got, err := r.Eval(in)
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	// A missing Variable is a runtime error for every operator but IsPresent.
	c := &checker{}
	r := c.parseChoiceRule(mustDecode(t, `{"Variable":"$.missing","StringEquals":"x","Next":"X"}`), "", true)
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
