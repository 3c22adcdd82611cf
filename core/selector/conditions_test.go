package selector

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseConditions(t *testing.T) {
	tests := []struct {
		in   string
		want Conditions
	}{
		{in: "region=eu-1", want: Conditions{{Key: "region", Op: Equals, Values: []string{"eu-1"}}}},                                 // one equality
		{in: " canary != true ", want: Conditions{{Key: "canary", Op: NotEquals, Values: []string{"true"}}}},                         // spaces around the operator
		{in: "region in (eu-2, us-1)", want: Conditions{{Key: "region", Op: In, Values: []string{"eu-2", "us-1"}}}},                  // a set
		{in: "region notin(eu-2)", want: Conditions{{Key: "region", Op: NotIn, Values: []string{"eu-2"}}}},                           // notin without a space before (
		{in: "site.timezone=Europe/Berlin", want: Conditions{{Key: "site.timezone", Op: Equals, Values: []string{"Europe/Berlin"}}}}, // a slash in a value
		{in: "host.name=my host", want: Conditions{{Key: "host.name", Op: Equals, Values: []string{"my host"}}}},                     // an inner space
		{in: "a=b=c", want: Conditions{{Key: "a", Op: Equals, Values: []string{"b=c"}}}},                                             // the first = separates
		{in: "k in (a=b)", want: Conditions{{Key: "k", Op: In, Values: []string{"a=b"}}}},                                            // = inside a set is a value
		{in: "cloud.region=eu-1, canary!=true, tier in (web, api)", want: Conditions{ // all required, in order
			{Key: "cloud.region", Op: Equals, Values: []string{"eu-1"}},
			{Key: "canary", Op: NotEquals, Values: []string{"true"}},
			{Key: "tier", Op: In, Values: []string{"web", "api"}},
		}},
	}
	for _, tt := range tests {
		got, err := ParseConditions(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseConditions(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseConditions_Errors(t *testing.T) {
	tests := []struct {
		in        string
		condition int
		reason    string
	}{
		{in: "", condition: 0, reason: "the conditions are empty"},              // nothing
		{in: "  ", condition: 0, reason: "the conditions are empty"},            // only spaces
		{in: "a=b,", condition: 2, reason: "the condition is empty"},            // trailing comma
		{in: "a=b,,c=d", condition: 2, reason: "the condition is empty"},        // double comma
		{in: "region", condition: 1, reason: "expected key=value"},              // no operator
		{in: "=x", condition: 1, reason: "the attribute name is empty"},         // no key
		{in: "host name=x", condition: 1, reason: "may not contain spaces"},     // a space in the key
		{in: "a!b=x", condition: 1, reason: "may not contain spaces or any of"}, // ! inside the key
		{in: "a=", condition: 1, reason: "a value of a is empty"},               // no value
		{in: "a=(b)", condition: 1, reason: "contains , ( or )"},                // parentheses in a value
		{in: "a=b, r in (x", condition: 2, reason: `"(" without ")"`},           // unclosed set
		{in: "r in x)", condition: 1, reason: `")" without "("`},                // unopened set
		{in: "r in ((x))", condition: 1, reason: "cannot nest"},                 // nested
		{in: "r in (x) y", condition: 1, reason: `text after ")"`},              // trailing text
		{in: "r within (x)", condition: 1, reason: "expected key in (a, b)"},    // unknown set operator
		{in: "r in ()", condition: 1, reason: "a value of r is empty"},          // empty set
		{in: "r in (a, , b)", condition: 1, reason: "a value of r is empty"},    // empty member
		{in: "a b in (x)", condition: 1, reason: "expected key in (a, b)"},      // two words before in
		{in: "region==eu-1", condition: 1, reason: "== is not an operator"},     // Kubernetes' == would silently compare with "=eu-1"
	}
	for _, tt := range tests {
		_, err := ParseConditions(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Condition != tt.condition || !strings.Contains(se.Reason, tt.reason) {
			t.Errorf("ParseConditions(%q) error = %v; want condition %d: ...%s...", tt.in, err, tt.condition, tt.reason)
		}
	}
}

func TestConditions_Matches(t *testing.T) {
	attrs := Map{"region": "eu-1", "canary": "true", "tier": "web"}
	tests := []struct {
		conds string
		want  bool
	}{
		{conds: "region=eu-1", want: true},                              // equal
		{conds: "region=eu-2", want: false},                             // other value
		{conds: "zone=a", want: false},                                  // = needs the attribute
		{conds: "canary!=true", want: false},                            // the canary is excluded
		{conds: "zone!=a", want: true},                                  // != holds for a missing attribute
		{conds: "region in (eu-2, eu-1)", want: true},                   // in the set
		{conds: "region in (eu-2)", want: false},                        // not in the set
		{conds: "zone in (a)", want: false},                             // in needs the attribute
		{conds: "region notin (us-1)", want: true},                      // not in the set
		{conds: "region notin (eu-1, us-1)", want: false},               // in the set
		{conds: "zone notin (a)", want: true},                           // notin holds for a missing attribute
		{conds: "region=eu-1, canary!=true", want: false},               // all required: the second fails
		{conds: "region=eu-1, tier in (web, api), zone!=a", want: true}, // all hold
	}
	for _, tt := range tests {
		cs, err := ParseConditions(tt.conds)
		if err != nil {
			t.Fatal(err)
		}
		if got := cs.Matches(attrs); got != tt.want {
			t.Errorf("%q matches = %v, want %v", tt.conds, got, tt.want)
		}
		if got := (Selector{MatchConditions: cs}).Matches(attrs); got != tt.want {
			t.Errorf("selector %q matches = %v, want %v", tt.conds, got, tt.want)
		}
	}
}

// Both forms of a selector must hold.
func TestSelector_BothForms(t *testing.T) {
	cs, _ := ParseConditions("canary!=true")
	s := Selector{MatchAttributes: map[string]string{"region": "eu-1"}, MatchConditions: cs}
	for _, tt := range []struct {
		attrs Map
		want  bool
	}{
		{attrs: Map{"region": "eu-1"}, want: true},                    // both hold
		{attrs: Map{"region": "eu-1", "canary": "true"}, want: false}, // the condition fails
		{attrs: Map{"region": "eu-2"}, want: false},                   // the attribute fails
	} {
		if got := s.Matches(tt.attrs); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.attrs, got, tt.want)
		}
	}
	if s.Empty() || !(Selector{}).Empty() || (Selector{MatchConditions: cs}).Empty() {
		t.Error("Empty must consider both forms")
	}
}

func TestConditions_Err(t *testing.T) {
	tests := []struct {
		conds Conditions
		want  string // "" for valid
	}{
		{conds: Conditions{{Key: "a", Op: Equals, Values: []string{"b"}}}, want: ""},                 // valid
		{conds: Conditions{{Key: "a", Op: "~", Values: []string{"b"}}}, want: "unknown operator"},    // operator
		{conds: Conditions{{Key: "a", Op: Equals, Values: []string{"b", "c"}}}, want: "one value"},   // two values for =
		{conds: Conditions{{Key: "a", Op: In}}, want: "at least one value"},                          // empty set
		{conds: Conditions{{Key: "a", Op: In, Values: []string{" b"}}}, want: "spaces at its ends"},  // untrimmed
		{conds: Conditions{{Key: "", Op: NotIn, Values: []string{"b"}}}, want: "name is empty"},      // no key
		{conds: Conditions{{Key: "a,b", Op: NotIn, Values: []string{"b"}}}, want: "may not contain"}, // comma in key
	}
	for _, tt := range tests {
		err := tt.conds.Err()
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%#v: Err() = %v, want %q", tt.conds, err, tt.want)
		}
	}
}

// Conditions travel as their text in JSON and read back equal.
func TestConditions_JSON(t *testing.T) {
	cs, _ := ParseConditions("cloud.region = eu-1,canary!=true, tier in (web,api)")
	data, err := json.Marshal(Selector{MatchConditions: cs})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"matchConditions":"cloud.region=eu-1, canary!=true, tier in (web, api)"}`; string(data) != want {
		t.Errorf("JSON = %s, want %s", data, want)
	}
	var back Selector
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back.MatchConditions, cs) {
		t.Errorf("round trip = %#v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"matchConditions":"a in (b"}`), &back); err == nil {
		t.Error("invalid conditions in JSON: want an error")
	}
	if data, _ := json.Marshal(Selector{}); string(data) != "{}" {
		t.Errorf("empty selector JSON = %s", data)
	}
}

func TestSelector_Clone(t *testing.T) {
	cs, _ := ParseConditions("r in (a, b)")
	s := Selector{MatchAttributes: map[string]string{"k": "v"}, MatchConditions: cs}
	c := s.Clone()
	s.MatchAttributes["k"] = "changed"
	s.MatchConditions[0].Values[0] = "changed"
	if c.MatchAttributes["k"] != "v" || c.MatchConditions[0].Values[0] != "a" {
		t.Errorf("clone shares memory: %#v", c)
	}
}

// FuzzParseConditions: any text is read or refused with a *SyntaxError, never
// a panic; what is read is valid and its canonical form reads back equal.
func FuzzParseConditions(f *testing.F) {
	for _, s := range []string{
		"cloud.region=eu-1, canary!=true", "region in (eu-2, us-1)", "r notin(a)", "a=b=c", "a!==x", "a==b",
		"k in (a=b)", "a=b,,", "r in ((x))", "x)", "host.name=my host", "=", "!=", "in ()", "a\x00=\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseConditions(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Reason == "" {
				t.Fatalf("%q: error %v is not a SyntaxError", s, err)
			}
			return
		}
		if len(cs) == 0 {
			t.Fatalf("%q: no conditions and no error", s)
		}
		if err := cs.Err(); err != nil {
			t.Fatalf("%q: parsed conditions are invalid: %v", s, err)
		}
		back, err := ParseConditions(cs.String())
		if err != nil || !reflect.DeepEqual(back, cs) {
			t.Fatalf("%q: canonical %q reads back as %#v, %v; want %#v", s, cs.String(), back, err, cs)
		}
	})
}
