package asl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Problem is one reason a definition is invalid: a code as the service uses them
// (SCHEMA_VALIDATION_FAILED, MISSING_TRANSITION_TARGET, ...), a message, and the location
// of the offending field as a JSON pointer such as /States/Wait/Seconds.
type Problem struct {
	Code     string
	Message  string
	Location string
}

func (p Problem) String() string { return p.Code + ": " + p.Message + " at " + p.Location }

// DefinitionError lists every problem of an invalid definition.
type DefinitionError struct{ Problems []Problem }

// Error renders the problems the way the service's InvalidDefinition message does.
func (e *DefinitionError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "Invalid State Machine Definition: '" + strings.Join(parts, ", ") + "'"
}

const (
	codeSchema      = "SCHEMA_VALIDATION_FAILED"
	codeTarget      = "MISSING_TRANSITION_TARGET"
	codeUnreachable = "UNREACHABLE_STATE"
	codeNoTerminal  = "NO_TERMINAL_STATE"
	codeUnsupported = "UNSUPPORTED_FEATURE"
	codeJSON        = "INVALID_JSON_DESCRIPTION"
)

// checker collects problems while a definition is parsed.
type checker struct {
	problems []Problem
}

func (c *checker) fail(loc, code, format string, args ...any) {
	c.problems = append(c.problems, Problem{Code: code, Message: fmt.Sprintf(format, args...), Location: loc})
}

// fields checks an object's field names: unknown fields are refused, and fields of
// features that this endpoint does not implement are refused naming the feature and the
// state (state is "" outside a state).
func (c *checker) fields(m map[string]any, loc, state string, allowed map[string]bool) {
	for _, k := range sortedKeys(m) {
		if allowed[k] {
			continue
		}
		if feature, ok := unsupportedFields[k]; ok {
			if feature != "" {
				feature = " (" + feature + ")"
			}
			c.unimplemented(loc+"/"+k, state, "field '%s'%s is not implemented by sfnlocal", k, feature)
			continue
		}
		at := loc
		if at == "" {
			at = "/"
		}
		c.fail(at, codeSchema, "The field '%s' is not supported by Step Functions", k)
	}
}

// unimplemented refuses a feature of the service that sfnlocal does not run, naming the
// state it appears in. The rule: sfnlocal implements what statemachines/ uses; a
// definition that needs more is refused when it is created, never run half-way or
// differently from the service.
func (c *checker) unimplemented(loc, state, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if state != "" {
		msg = fmt.Sprintf("state %q: %s", state, msg)
	}
	c.problems = append(c.problems, Problem{Code: codeUnsupported, Message: msg, Location: loc})
}

// unsupportedFields are the fields of the service that sfnlocal refuses, with the
// feature they belong to (or a hint) for the message. Fields of the state types that
// sfnlocal does not implement (Pass, Parallel, Map, with Distributed Map's) never get
// here: the type is refused first.
var unsupportedFields = map[string]string{
	"InputPath":            "",
	"JitterStrategy":       "",
	"Assign":               "workflow variables",
	"Arguments":            "JSONata",
	"Output":               "JSONata",
	"Credentials":          "cross-account task credentials",
	"ResultSelector":       "",
	"TimeoutSeconds":       "",
	"HeartbeatSeconds":     "",
	"HeartbeatSecondsPath": "",
	"Seconds":              "a Wait implements TimestampPath",
	"SecondsPath":          "a Wait implements TimestampPath",
	"Timestamp":            "a Wait implements TimestampPath",
	"ErrorPath":            "a Fail implements Error",
	"CausePath":            "a Fail implements Cause",
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func (c *checker) required(m map[string]any, loc string, names ...string) bool {
	var missing []string
	for _, n := range names {
		if _, ok := m[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		c.fail(loc, codeSchema, "These fields are required: [%s]", strings.Join(missing, ", "))
		return false
	}
	return true
}

func (c *checker) str(m map[string]any, key, loc string) (string, bool) {
	v, ok := m[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be a STRING", key)
		return "", false
	}
	return s, true
}

func (c *checker) boolean(m map[string]any, key, loc string) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be a BOOLEAN", key)
		return false, false
	}
	return b, true
}

func (c *checker) object(m map[string]any, key, loc string) (map[string]any, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	o, isObj := v.(map[string]any)
	if !isObj {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be an OBJECT", key)
		return nil, false
	}
	return o, true
}

func (c *checker) array(m map[string]any, key, loc string) ([]any, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	a, isArr := v.([]any)
	if !isArr {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be an ARRAY", key)
		return nil, false
	}
	if len(a) == 0 {
		c.fail(loc+"/"+key, codeSchema, "Value cannot be empty")
		return nil, false
	}
	return a, true
}

// integer reads an integer field within [lo, hi].
func (c *checker) integer(m map[string]any, key, loc string, lo, hi int64) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, isNum := v.(json.Number)
	i, err := n.Int64()
	if !isNum || err != nil {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be an INTEGER", key)
		return 0, false
	}
	if i < lo || i > hi {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be between %d and %d", key, lo, hi)
		return 0, false
	}
	return i, true
}

func (c *checker) number(m map[string]any, key, loc string, lo float64) (float64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, isNum := v.(json.Number)
	f, err := n.Float64()
	if !isNum || err != nil || math.IsInf(f, 0) {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be a NUMBER", key)
		return 0, false
	}
	if f < lo {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be at least %v", key, lo)
		return 0, false
	}
	return f, true
}

// path reads a Reference Path field.
func (c *checker) path(m map[string]any, key, loc, state string) (*Path, bool) {
	s, ok := c.str(m, key, loc)
	if !ok {
		return nil, false
	}
	p, err := ParsePath(s)
	if isUnimplemented(err) {
		c.unimplemented(loc+"/"+key, state, "%s: %v", key, err)
		return nil, false
	}
	if err != nil {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be a valid Reference Path: %v", key, err)
		return nil, false
	}
	return p, true
}

// pathField reads OutputPath or ResultPath, which may be null. ResultPath
// (write) writes into the input, never into the context object.
func (c *checker) pathField(m map[string]any, key, loc, state string, write bool) PathField {
	v, ok := m[key]
	if !ok {
		return PathField{}
	}
	if v == nil {
		return PathField{Null: true}
	}
	p, ok := c.path(m, key, loc, state)
	if !ok {
		return PathField{}
	}
	if write && p.IsContext() {
		c.fail(loc+"/"+key, codeSchema, "The value for the field '%s' must be a Reference Path into the input", key)
		return PathField{}
	}
	return PathField{Path: p}
}

func (c *checker) template(m map[string]any, key, loc, state string) *Template {
	v, ok := m[key]
	if !ok {
		return nil
	}
	t, err := CompileTemplate(v)
	var te *TemplateError
	if errors.As(err, &te) && te.Unimplemented != nil {
		c.unimplemented(loc+"/"+key, state, "%s field '%s': %v", key, te.Field, te.Unimplemented)
		return nil
	}
	if err != nil {
		c.fail(loc+"/"+key, codeSchema, "%s", err.Error())
		return nil
	}
	return t
}

func (c *checker) errorNames(m map[string]any, loc string) []string {
	arr, ok := c.array(m, "ErrorEquals", loc)
	if !ok {
		if _, present := m["ErrorEquals"]; !present {
			c.fail(loc, codeSchema, "These fields are required: [ErrorEquals]")
		}
		return nil
	}
	names := make([]string, 0, len(arr))
	for i, v := range arr {
		s, isStr := v.(string)
		if !isStr {
			c.fail(fmt.Sprintf("%s/ErrorEquals/%d", loc, i), codeSchema, "An error name must be a STRING")
			continue
		}
		if strings.HasPrefix(s, "States.") && !knownStatesErrors[s] {
			c.fail(fmt.Sprintf("%s/ErrorEquals/%d", loc, i), codeSchema, "'%s' is not a predefined error name", s)
		}
		if s == ErrorAll && len(arr) > 1 {
			c.fail(loc+"/ErrorEquals", codeSchema, "'States.ALL' must appear alone in ErrorEquals")
		}
		names = append(names, s)
	}
	return names
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
