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
	op       string // the comparison operator without a "Path" suffix
	literal  any    // the operand, or nil when operand is a path
	operand  *Path  // for the ...Path operators
}

// comparison operators by operand type.
var comparisonOps = map[string]string{
	"StringEquals": "string", "StringLessThan": "string", "StringGreaterThan": "string",
	"StringLessThanEquals": "string", "StringGreaterThanEquals": "string", "StringMatches": "pattern",
	"NumericEquals": "number", "NumericLessThan": "number", "NumericGreaterThan": "number",
	"NumericLessThanEquals": "number", "NumericGreaterThanEquals": "number",
	"BooleanEquals":   "boolean",
	"TimestampEquals": "timestamp", "TimestampLessThan": "timestamp", "TimestampGreaterThan": "timestamp",
	"TimestampLessThanEquals": "timestamp", "TimestampGreaterThanEquals": "timestamp",
	"IsNull": "boolean", "IsPresent": "boolean", "IsNumeric": "boolean", "IsString": "boolean",
	"IsBoolean": "boolean", "IsTimestamp": "boolean",
}

// operator resolves a field name to its operator and whether it is a ...Path form.
func operator(field string) (op string, isPath, ok bool) {
	if _, ok := comparisonOps[field]; ok {
		return field, false, true
	}
	base := strings.TrimSuffix(field, "Path")
	if t, ok := comparisonOps[base]; ok && base != field && t != "pattern" && !strings.HasPrefix(base, "Is") {
		return base, true, true
	}
	return "", false, false
}

// parseChoiceRule checks and compiles a rule; top-level rules need Next, nested rules
// must not have it.
func (c *checker) parseChoiceRule(v any, loc string, top bool) *ChoiceRule {
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
	for k := range m {
		switch k {
		case "Next", "Comment", "Variable":
			continue
		case "And", "Or", "Not":
			opFields = append(opFields, k)
			continue
		}
		if _, _, ok := operator(k); ok {
			opFields = append(opFields, k)
			continue
		}
		if feature, ok := unsupportedFields[k]; ok {
			c.fail(loc+"/"+k, codeUnsupported, "The field '%s' (%s) is not supported by sfnlocal", k, feature)
		} else if k == "Condition" {
			c.fail(loc+"/"+k, codeUnsupported, "The field 'Condition' (JSONata) is not supported by sfnlocal")
		} else {
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
			sub := c.parseChoiceRule(e, fmt.Sprintf("%s/%s/%d", loc, field, i), false)
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
		r.not = c.parseChoiceRule(m["Not"], loc+"/Not", false)
		return r
	}
	if _, has := m["Variable"]; !has {
		c.fail(loc, codeSchema, "These fields are required: [Variable]")
		return nil
	}
	r.variable, _ = c.path(m, "Variable", loc, true)
	op, isPath, _ := operator(field)
	r.op = op
	if isPath {
		r.operand, _ = c.path(m, field, loc, true)
		return r
	}
	val := m[field]
	bad := func(kind string) *ChoiceRule {
		c.fail(loc+"/"+field, codeSchema, "The value for the field '%s' must be %s", field, kind)
		return nil
	}
	switch comparisonOps[op] {
	case "string", "pattern":
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
	case "timestamp":
		s, ok := val.(string)
		if !ok {
			return bad("a STRING")
		}
		if _, err := ParseTimestamp(s); err != nil {
			return bad("a valid timestamp")
		}
	}
	r.literal = val
	return r
}

// Eval evaluates the rule against the Choice state's input. A Variable (or an operand
// path) that selects nothing is a States.Runtime error, except for IsPresent.
func (r *ChoiceRule) Eval(input any) (bool, error) {
	switch {
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
	}
	v, err := r.variable.Get(input)
	if r.op == "IsPresent" {
		return (err == nil) == r.literal.(bool), nil
	}
	if err != nil {
		return false, invalidChoicePath(r.variable)
	}
	operand := r.literal
	if r.operand != nil {
		operand, err = r.operand.Get(input)
		if err != nil {
			return false, invalidChoicePath(r.operand)
		}
	}
	return compare(r.op, v, operand), nil
}

func invalidChoicePath(p *Path) error {
	return Runtimef("Invalid path '%s': The choice state's condition path references an invalid value.", p)
}

// compare applies a comparison operator; mismatched types compare false.
func compare(op string, v, operand any) bool {
	switch op {
	case "IsNull":
		return (v == nil) == operand.(bool)
	case "IsNumeric":
		_, ok := v.(json.Number)
		return ok == operand.(bool)
	case "IsString":
		_, ok := v.(string)
		return ok == operand.(bool)
	case "IsBoolean":
		_, ok := v.(bool)
		return ok == operand.(bool)
	case "IsTimestamp":
		s, ok := v.(string)
		if ok {
			_, err := ParseTimestamp(s)
			ok = err == nil
		}
		return ok == operand.(bool)
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b
	case "StringMatches":
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && matchWildcard(b, a)
	}
	var c int
	switch {
	case strings.HasPrefix(op, "String"):
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false
		}
		c = strings.Compare(a, b)
	case strings.HasPrefix(op, "Numeric"):
		a, ok1 := v.(json.Number)
		b, ok2 := operand.(json.Number)
		if !ok1 || !ok2 {
			return false
		}
		var ok bool
		if c, ok = compareNumbers(a, b); !ok {
			return false
		}
	case strings.HasPrefix(op, "Timestamp"):
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false
		}
		ta, err1 := ParseTimestamp(a)
		tb, err2 := ParseTimestamp(b)
		if err1 != nil || err2 != nil {
			return false
		}
		c = ta.Compare(tb)
	default:
		return false
	}
	switch {
	case strings.HasSuffix(op, "LessThanEquals"):
		return c <= 0
	case strings.HasSuffix(op, "GreaterThanEquals"):
		return c >= 0
	case strings.HasSuffix(op, "LessThan"):
		return c < 0
	case strings.HasSuffix(op, "GreaterThan"):
		return c > 0
	case strings.HasSuffix(op, "Equals"):
		return c == 0
	}
	return false
}

// matchWildcard matches StringMatches patterns: * matches any run of characters,
// \* is a literal star and \\ a literal backslash.
func matchWildcard(pattern, s string) bool {
	type tok struct {
		star bool
		r    rune
	}
	var toks []tok
	pr := []rune(pattern)
	for i := 0; i < len(pr); i++ {
		switch {
		case pr[i] == '\\' && i+1 < len(pr) && (pr[i+1] == '*' || pr[i+1] == '\\'):
			toks = append(toks, tok{r: pr[i+1]})
			i++
		case pr[i] == '*':
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{r: pr[i]})
		}
	}
	sr := []rune(s)
	// Classic greedy matching with backtracking to the last star.
	ti, si, starT, starS := 0, 0, -1, 0
	for si < len(sr) {
		switch {
		case ti < len(toks) && !toks[ti].star && toks[ti].r == sr[si]:
			ti++
			si++
		case ti < len(toks) && toks[ti].star:
			starT, starS = ti, si
			ti++
		case starT >= 0:
			starS++
			ti, si = starT+1, starS
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
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
