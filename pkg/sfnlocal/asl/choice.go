package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ChoiceRule is a Choice Rule: a boolean expression (And, Or, Not) or a data-test
// expression (Variable and one comparison operator). Top-level rules have Next.
type ChoiceRule struct {
	Next string

	and []*ChoiceRule
	or  []*ChoiceRule
	not *ChoiceRule

	variable *Path
	op       string
	literal  any
}

// comparisonOps are the comparison operators sfnlocal implements, with the JSON type of
// their operand: the ones our state machines use or are about to (a verdict routed on
// StringEquals, with And/Not and a presence or number test around it). The
// specification's other operators (String/Numeric/Timestamp orderings, StringMatches,
// the ...Path forms, IsNull, IsString, ...) are refused when a definition is created.
var comparisonOps = map[string]string{
	"StringEquals":  "string",
	"NumericEquals": "number",
	"BooleanEquals": "boolean",
	"IsPresent":     "boolean",
}

// implementedChoiceOps lists them for messages.
const implementedChoiceOps = "And, Or, Not, StringEquals, NumericEquals, BooleanEquals, IsPresent"

// specChoiceOps are the specification's other comparison operators (each also with a
// Path suffix, but for StringMatches and the Is... tests), refused by name.
var specChoiceOps = set(
	"StringLessThan", "StringGreaterThan", "StringLessThanEquals", "StringGreaterThanEquals", "StringMatches",
	"NumericLessThan", "NumericGreaterThan", "NumericLessThanEquals", "NumericGreaterThanEquals",
	"TimestampEquals", "TimestampLessThan", "TimestampGreaterThan", "TimestampLessThanEquals", "TimestampGreaterThanEquals",
	"IsNull", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp",
)

// isSpecChoiceOp reports whether a field is a comparison operator of the specification.
func isSpecChoiceOp(field string) bool {
	base := strings.TrimSuffix(field, "Path")
	_, implemented := comparisonOps[base]
	return specChoiceOps[field] || (base != field && (implemented || specChoiceOps[base]) &&
		base != "StringMatches" && !strings.HasPrefix(base, "Is"))
}

// parseChoiceRule checks and compiles a rule; top-level rules need Next, nested rules
// must not have it. state names the Choice state in messages.
func (c *checker) parseChoiceRule(v any, loc, state string, top bool) *ChoiceRule {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(loc, codeSchema, "A Choice Rule must be an OBJECT")
		return nil
	}
	r := &ChoiceRule{}
	if next, ok := c.str(m, "Next", loc); ok {
		if !top {
			c.fail(loc+"/Next", codeSchema, "Nested Choice Rules must not have 'Next'")
		}
		r.Next = next
	} else if top {
		if _, present := m["Next"]; !present {
			c.fail(loc, codeSchema, "These fields are required: [Next]")
		}
	}
	var opFields []string
	for _, k := range sortedKeys(m) {
		switch {
		case k == "Next" || k == "Comment" || k == "Variable":
			continue
		case k == "And" || k == "Or" || k == "Not" || comparisonOps[k] != "":
			opFields = append(opFields, k)
			continue
		case isSpecChoiceOp(k):
			c.unimplemented(loc+"/"+k, state, "Choice operator %s is not implemented by sfnlocal (it implements: %s)", k, implementedChoiceOps)
		case k == "Condition":
			c.unimplemented(loc+"/"+k, state, "field 'Condition' (JSONata) is not implemented by sfnlocal")
		case unsupportedFields[k] != "":
			c.unimplemented(loc+"/"+k, state, "field '%s' (%s) is not implemented by sfnlocal", k, unsupportedFields[k])
		default:
			c.fail(loc, codeSchema, "The field '%s' is not supported by Step Functions", k)
		}
		return nil
	}
	if len(opFields) != 1 {
		c.fail(loc, codeSchema, "A Choice Rule must have exactly one comparison operator or one of And, Or, Not (found %d)", len(opFields))
		return nil
	}
	field := opFields[0]
	switch field {
	case "And", "Or":
		if _, has := m["Variable"]; has {
			c.fail(loc+"/Variable", codeSchema, "The field 'Variable' is not allowed with '%s'", field)
		}
		arr, ok := c.array(m, field, loc)
		if !ok {
			return nil
		}
		for i, e := range arr {
			sub := c.parseChoiceRule(e, fmt.Sprintf("%s/%s/%d", loc, field, i), state, false)
			if field == "And" {
				r.and = append(r.and, sub)
			} else {
				r.or = append(r.or, sub)
			}
		}
		return r
	case "Not":
		if _, has := m["Variable"]; has {
			c.fail(loc+"/Variable", codeSchema, "The field 'Variable' is not allowed with 'Not'")
		}
		r.not = c.parseChoiceRule(m["Not"], loc+"/Not", state, false)
		return r
	}
	if _, has := m["Variable"]; !has {
		c.fail(loc, codeSchema, "These fields are required: [Variable]")
		return nil
	}
	r.variable, _ = c.path(m, "Variable", loc, state)
	r.op = field
	val := m[field]
	bad := func(kind string) *ChoiceRule {
		c.fail(loc+"/"+field, codeSchema, "The value for the field '%s' must be %s", field, kind)
		return nil
	}
	switch comparisonOps[field] {
	case "string":
		if _, ok := val.(string); !ok {
			return bad("a STRING")
		}
	case "number":
		if _, ok := val.(json.Number); !ok {
			return bad("a NUMBER")
		}
	case "boolean":
		if _, ok := val.(bool); !ok {
			return bad("a BOOLEAN")
		}
	}
	r.literal = val
	return r
}

// Eval evaluates the rule against the Choice state's input. A Variable that selects
// nothing is a States.Runtime error, except for IsPresent.
func (r *ChoiceRule) Eval(input any) (bool, error) {
	switch {
	case r == nil:
		return false, nil
	case r.and != nil:
		for _, sub := range r.and {
			ok, err := sub.Eval(input)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.or != nil:
		for _, sub := range r.or {
			ok, err := sub.Eval(input)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.not != nil:
		ok, err := r.not.Eval(input)
		return !ok, err
	case r.variable == nil:
		return false, nil
	}
	v, err := r.variable.Get(input)
	if r.op == "IsPresent" {
		return (err == nil) == r.literal.(bool), nil
	}
	if err != nil {
		return false, Runtimef("Invalid path '%s': The choice state's condition path references an invalid value.", r.variable)
	}
	// Mismatched types compare false, as on the service.
	switch r.op {
	case "StringEquals", "BooleanEquals":
		return v == r.literal, nil
	case "NumericEquals":
		a, ok := v.(json.Number)
		if !ok {
			return false, nil
		}
		c, ok := compareNumbers(a, r.literal.(json.Number))
		return ok && c == 0, nil
	}
	return false, nil
}

// ParseTimestamp parses a timestamp as the States Language defines them: RFC 3339 with
// an uppercase T between date and time and an uppercase Z when there is no numeric
// offset, for example 2016-03-14T01:59:00Z or 2016-03-14T01:59:00.123+01:00.
func ParseTimestamp(s string) (time.Time, error) {
	if len(s) < 20 || s[10] != 'T' || strings.ContainsAny(s, "tz") {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp", s)
	}
	return time.Parse(time.RFC3339Nano, s)
}
