package asl

import (
	"fmt"
	"strings"
	"time"
)

// ChoiceRule is a top-level Choice Rule of the one form our state machine uses: a
// Variable tested with StringEquals, and Next.
type ChoiceRule struct {
	Next string

	variable *Path
	literal  string
}

// implementedChoiceOps lists the comparison operators sfnlocal implements, for
// messages: the one statemachines/ routes on.
const implementedChoiceOps = "StringEquals"

// specChoiceOps are the specification's other comparison operators and boolean
// expressions, refused by name.
var specChoiceOps = set(
	"And", "Or", "Not", "NumericEquals", "BooleanEquals", "IsPresent",
	"StringLessThan", "StringGreaterThan", "StringLessThanEquals", "StringGreaterThanEquals", "StringMatches",
	"NumericLessThan", "NumericGreaterThan", "NumericLessThanEquals", "NumericGreaterThanEquals",
	"TimestampEquals", "TimestampLessThan", "TimestampGreaterThan", "TimestampLessThanEquals", "TimestampGreaterThanEquals",
	"IsNull", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp",
)

// isSpecChoiceOp reports whether a field is a comparison operator (or a boolean
// expression) of the specification, with its Path form where it has one.
func isSpecChoiceOp(field string) bool {
	base := strings.TrimSuffix(field, "Path")
	return specChoiceOps[field] || (base != field && (base == "StringEquals" || specChoiceOps[base]) &&
		base != "StringMatches" && !strings.HasPrefix(base, "Is") && base != "And" && base != "Or" && base != "Not")
}

// parseChoiceRule checks and compiles a top-level rule: Variable, StringEquals and
// Next. state names the Choice state in messages.
func (c *checker) parseChoiceRule(v any, loc, state string) *ChoiceRule {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(loc, codeSchema, "A Choice Rule must be an OBJECT")
		return nil
	}
	r := &ChoiceRule{}
	if next, ok := c.str(m, "Next", loc); ok {
		r.Next = next
	} else if _, present := m["Next"]; !present {
		c.fail(loc, codeSchema, "These fields are required: [Next]")
	}
	for _, k := range sortedKeys(m) {
		switch {
		case k == "Next" || k == "Comment" || k == "Variable" || k == "StringEquals":
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
	if _, has := m["StringEquals"]; !has {
		c.fail(loc, codeSchema, "A Choice Rule must have a comparison operator")
		return nil
	}
	if _, has := m["Variable"]; !has {
		c.fail(loc, codeSchema, "These fields are required: [Variable]")
		return nil
	}
	r.variable, _ = c.path(m, "Variable", loc, state)
	lit, ok := m["StringEquals"].(string)
	if !ok {
		c.fail(loc+"/StringEquals", codeSchema, "The value for the field 'StringEquals' must be a STRING")
		return nil
	}
	r.literal = lit
	return r
}

// Eval evaluates the rule against the Choice state's input. A Variable that selects
// nothing is a States.Runtime error; a value that is not a string compares false, as
// on the service.
func (r *ChoiceRule) Eval(input any) (bool, error) {
	if r == nil || r.variable == nil {
		return false, nil
	}
	v, err := r.variable.Get(input)
	if err != nil {
		return false, Runtimef("Invalid path '%s': The choice state's condition path references an invalid value.", r.variable)
	}
	s, ok := v.(string)
	return ok && s == r.literal, nil
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
