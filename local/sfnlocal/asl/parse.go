package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Maximum values the service accepts.
const (
	maxSeconds     = 99999999
	maxStateName   = 80
	maxDelaySecond = 31622400
)

// stateFields are the fields sfnlocal implements, by state type: what statemachines/
// uses. Other fields of the service are refused by name (unsupportedFields).
var stateFields = map[string]map[string]bool{
	TypeTask:    set("Type", "Comment", "QueryLanguage", "Next", "End", "OutputPath", "ResultPath", "Parameters", "Retry", "Catch", "Resource", "TimeoutSecondsPath"),
	TypeChoice:  set("Type", "Comment", "QueryLanguage", "OutputPath", "Choices", "Default"),
	TypeWait:    set("Type", "Comment", "QueryLanguage", "Next", "End", "OutputPath", "TimestampPath"),
	TypeSucceed: set("Type", "Comment", "QueryLanguage", "OutputPath"),
	TypeFail:    set("Type", "Comment", "QueryLanguage", "Error", "Cause"),
}

// implementedTypes lists the state types for messages, in the order the README gives.
const implementedTypes = "Task, Wait, Choice, Succeed, Fail"

// serviceOnlyTypes are the state types of the specification that sfnlocal refuses:
// none of our definitions has one.
var serviceOnlyTypes = set("Pass", "Parallel", "Map")

// Parse parses and validates a definition. An invalid definition is a *DefinitionError
// that names every problem with its state and field.
func Parse(definition string) (*Definition, error) {
	v, err := Decode([]byte(definition))
	if err != nil {
		return nil, &DefinitionError{Problems: []Problem{{Code: codeJSON, Message: err.Error(), Location: "/"}}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &DefinitionError{Problems: []Problem{{Code: codeJSON, Message: "Definition must be a valid JSON object", Location: "/"}}}
	}
	c := &checker{}
	d := &Definition{}
	c.fields(m, "", "", set("Comment", "StartAt", "States", "Version", "QueryLanguage"))
	d.Comment, _ = c.str(m, "Comment", "")
	if version, ok := c.str(m, "Version", ""); ok && version != "1.0" {
		c.fail("/Version", codeSchema, "The value for the field 'Version' must be '1.0'")
	}
	c.queryLanguage(m, "", "")
	d.StartAt, d.States = c.machine(m)
	if len(c.problems) > 0 {
		return nil, &DefinitionError{Problems: c.problems}
	}
	return d, nil
}

func (c *checker) queryLanguage(m map[string]any, loc, state string) {
	if ql, ok := c.str(m, "QueryLanguage", loc); ok {
		switch ql {
		case "JSONPath":
		case "JSONata":
			c.unimplemented(loc+"/QueryLanguage", state, "the query language 'JSONata' is not implemented by sfnlocal")
		default:
			c.fail(loc+"/QueryLanguage", codeSchema, "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		}
	}
}

// machine parses StartAt and States and checks transitions, reachability and that the
// machine can end.
func (c *checker) machine(m map[string]any) (string, map[string]*State) {
	if !c.required(m, "/", "StartAt", "States") {
		return "", nil
	}
	startAt, _ := c.str(m, "StartAt", "")
	raw, ok := c.object(m, "States", "")
	if !ok {
		return "", nil
	}
	if len(raw) == 0 {
		c.fail("/States", codeSchema, "Value cannot be empty")
		return "", nil
	}
	states := map[string]*State{}
	for _, name := range sortedKeys(raw) {
		if st := c.state(name, raw[name], "/States/"+name); st != nil {
			states[name] = st
		}
	}
	if _, ok := raw[startAt]; !ok {
		c.fail("/StartAt", codeTarget, "Missing 'Next' target: %s", startAt)
	}
	c.transitions(startAt, states, raw)
	return startAt, states
}

// transitions checks that every transition names a state (of raw, so that a state
// refused for another reason is not reported again as missing), that every state is
// reachable from startAt and that the machine can end.
func (c *checker) transitions(startAt string, states map[string]*State, raw map[string]any) {
	target := func(from, field, next string) {
		if _, ok := raw[next]; !ok {
			c.fail("/States/"+from+"/"+field, codeTarget, "Missing 'Next' target: %s", next)
		}
	}
	terminal := false
	for _, name := range sortedNames(states) {
		st := states[name]
		if st.Next != "" {
			target(name, "Next", st.Next)
		}
		if st.Default != "" {
			target(name, "Default", st.Default)
		}
		for i, r := range st.Choices {
			if r != nil && r.Next != "" {
				target(name, fmt.Sprintf("Choices/%d/Next", i), r.Next)
			}
		}
		for i, ct := range st.Catch {
			if ct.Next != "" {
				target(name, fmt.Sprintf("Catch/%d/Next", i), ct.Next)
			}
		}
		if st.End || st.Type == TypeSucceed || st.Type == TypeFail {
			terminal = true
		}
	}
	if len(states) < len(raw) || refusedRule(states) {
		return // a refused state or rule hides transitions: reachability and ends are unknown
	}
	seen := map[string]bool{}
	queue := []string{startAt}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		st, ok := states[name]
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		queue = append(queue, st.Next, st.Default)
		for _, r := range st.Choices {
			if r != nil {
				queue = append(queue, r.Next)
			}
		}
		for _, ct := range st.Catch {
			queue = append(queue, ct.Next)
		}
	}
	if _, ok := states[startAt]; ok {
		for _, name := range sortedNames(states) {
			if !seen[name] {
				c.fail("/States/"+name, codeUnreachable, "State \"%s\" is not reachable", name)
			}
		}
	}
	if !terminal {
		c.fail("/States", codeNoTerminal, "No terminal state (Succeed, Fail or End) in the state machine")
	}
}

// refusedRule reports whether a Choice rule of some state was refused (or invalid),
// so that its Next is unknown.
func refusedRule(states map[string]*State) bool {
	for _, st := range states {
		for _, r := range st.Choices {
			if r == nil {
				return true
			}
		}
	}
	return false
}

func (c *checker) state(name string, v any, loc string) *State {
	if len(name) == 0 || len([]rune(name)) > maxStateName {
		c.fail(loc, codeSchema, "State names must be 1 to %d characters long", maxStateName)
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(loc, codeSchema, "A state must be an OBJECT")
		return nil
	}
	if !c.required(m, loc, "Type") {
		return nil
	}
	st := &State{Name: name}
	st.Type, _ = c.str(m, "Type", loc)
	fields, ok := stateFields[st.Type]
	switch {
	case !ok && serviceOnlyTypes[st.Type]:
		c.unimplemented(loc+"/Type", name, "Type %q is not implemented by sfnlocal (it implements: %s)", st.Type, implementedTypes)
		return nil
	case !ok:
		c.fail(loc+"/Type", codeSchema, "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]")
		return nil
	}
	c.fields(m, loc, name, fields)
	c.queryLanguage(m, loc, name)
	c.transition(st, m, loc, fields["End"])
	st.OutputPath = c.pathField(m, "OutputPath", loc, name, false)
	st.ResultPath = c.pathField(m, "ResultPath", loc, name, true)
	st.Parameters = c.template(m, "Parameters", loc, name)
	if fields["Retry"] {
		st.Retry = c.retriers(m, loc, st.Name)
		st.Catch = c.catchers(m, loc, st.Name)
	}
	switch st.Type {
	case TypeTask:
		c.task(st, m, loc)
	case TypeChoice:
		c.choice(st, m, loc)
	case TypeWait:
		c.wait(st, m, loc)
	case TypeFail:
		st.Error = c.optionalStr(m, "Error", loc)
		st.Cause = c.optionalStr(m, "Cause", loc)
	}
	return st
}

// transition checks Next and End: states that may end have exactly one of them.
func (c *checker) transition(st *State, m map[string]any, loc string, mayEnd bool) {
	if !mayEnd {
		return
	}
	next, hasNext := c.str(m, "Next", loc)
	end, hasEnd := c.boolean(m, "End", loc)
	_, nextPresent := m["Next"]
	switch {
	case nextPresent && hasEnd && end:
		c.fail(loc, codeSchema, "Only one of 'Next' or 'End' can be present")
	case hasEnd && !end && !nextPresent:
		c.fail(loc+"/End", codeSchema, "The value for the field 'End' must be true")
	case !nextPresent && !hasEnd:
		if _, endPresent := m["End"]; !endPresent {
			c.fail(loc, codeSchema, "Either 'Next' or 'End' is required")
		}
	}
	st.Next = next
	st.End = hasEnd && end && !hasNext
}

func (c *checker) retriers(m map[string]any, loc, state string) []Retrier {
	arr, ok := c.array(m, "Retry", loc)
	if !ok {
		return nil
	}
	out := make([]Retrier, 0, len(arr))
	for i, v := range arr {
		at := fmt.Sprintf("%s/Retry/%d", loc, i)
		rm, ok := v.(map[string]any)
		if !ok {
			c.fail(at, codeSchema, "A Retrier must be an OBJECT")
			continue
		}
		c.fields(rm, at, state, set("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "Comment"))
		r := Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2.0}
		r.ErrorEquals = c.errorNames(rm, at)
		if n, ok := c.integer(rm, "IntervalSeconds", at, 1, maxSeconds); ok {
			r.IntervalSeconds = n
		}
		if n, ok := c.integer(rm, "MaxAttempts", at, 0, maxSeconds); ok {
			r.MaxAttempts = n
		}
		if f, ok := c.number(rm, "BackoffRate", at, 1.0); ok {
			r.BackoffRate = f
		}
		r.MaxDelaySeconds, _ = c.integer(rm, "MaxDelaySeconds", at, 1, maxDelaySecond)
		if contains(r.ErrorEquals, ErrorAll) && i != len(arr)-1 {
			c.fail(at+"/ErrorEquals", codeSchema, "A Retrier with 'States.ALL' must be the last Retrier")
		}
		out = append(out, r)
	}
	return out
}

func (c *checker) catchers(m map[string]any, loc, state string) []Catcher {
	arr, ok := c.array(m, "Catch", loc)
	if !ok {
		return nil
	}
	out := make([]Catcher, 0, len(arr))
	for i, v := range arr {
		at := fmt.Sprintf("%s/Catch/%d", loc, i)
		cm, ok := v.(map[string]any)
		if !ok {
			c.fail(at, codeSchema, "A Catcher must be an OBJECT")
			continue
		}
		c.fields(cm, at, state, set("ErrorEquals", "Next", "ResultPath", "Comment"))
		ct := Catcher{ErrorEquals: c.errorNames(cm, at)}
		if next, ok := c.str(cm, "Next", at); ok {
			ct.Next = next
		} else if _, present := cm["Next"]; !present {
			c.fail(at, codeSchema, "These fields are required: [Next]")
		}
		ct.ResultPath = c.pathField(cm, "ResultPath", at, state, true)
		if contains(ct.ErrorEquals, ErrorAll) && i != len(arr)-1 {
			c.fail(at+"/ErrorEquals", codeSchema, "A Catcher with 'States.ALL' must be the last Catcher")
		}
		out = append(out, ct)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func (c *checker) task(st *State, m map[string]any, loc string) {
	if !c.required(m, loc, "Resource") {
		return
	}
	arn, ok := c.str(m, "Resource", loc)
	if !ok {
		return
	}
	st.Resource = c.resource(arn, loc+"/Resource", st.Name)
	if st.Resource.Kind != 0 {
		c.lambdaParameters(st, m, loc)
	}
	if _, ok := m["TimeoutSecondsPath"]; ok {
		if st.Resource.Kind != ResourceLambdaInvokeWaitForTaskToken {
			c.unimplemented(loc+"/TimeoutSecondsPath", st.Name, "TimeoutSecondsPath is implemented for .waitForTaskToken tasks only")
			return
		}
		st.TimeoutSecondsPath, _ = c.path(m, "TimeoutSecondsPath", loc, st.Name)
	}
}

// TimeoutSeconds resolves a Task's TimeoutSecondsPath from its input: a
// positive integer of seconds. ok is false when
// the state has no TimeoutSecondsPath.
func (st *State) TimeoutSeconds(input any) (secs int64, ok bool, err error) {
	if st.TimeoutSecondsPath == nil {
		return 0, false, nil
	}
	v, perr := st.TimeoutSecondsPath.Get(input)
	if perr != nil {
		return 0, true, Runtimef("The TimeoutSecondsPath parameter does not reference an input value: %s", st.TimeoutSecondsPath)
	}
	n, isNum := v.(json.Number)
	i, ierr := n.Int64()
	if !isNum || ierr != nil || i < 1 || i > maxSeconds {
		return 0, true, Runtimef("The TimeoutSecondsPath parameter does not reference a positive integer: %s == %s", st.TimeoutSecondsPath, javaString(v))
	}
	return i, true, nil
}

// resource classifies a Task's Resource: the two Lambda integrations our state machines
// use. Every other resource is refused.
func (c *checker) resource(arn, loc, state string) Resource {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 6 || parts[0] != "arn" {
		c.fail(loc, codeSchema, "The value for the field 'Resource' must be a valid ARN")
		return Resource{}
	}
	service, resource := parts[2], strings.Join(parts[5:], ":")
	switch {
	case service == "states" && resource == "lambda:invoke":
		return Resource{ARN: arn, Kind: ResourceLambdaInvoke}
	case service == "states" && resource == "lambda:invoke.waitForTaskToken":
		return Resource{ARN: arn, Kind: ResourceLambdaInvokeWaitForTaskToken}
	case service == "lambda":
		c.unimplemented(loc, state, "the Lambda function ARN resource %s is not implemented by sfnlocal (use arn:aws:states:::lambda:invoke)", arn)
	case service == "states" && strings.HasPrefix(resource, "activity:"):
		c.unimplemented(loc, state, "activities are not implemented by sfnlocal: %s", arn)
	case service == "states" && strings.Contains(resource, ".sync"):
		c.unimplemented(loc, state, "the '.sync' integration pattern is not implemented by sfnlocal: %s", arn)
	case service == "states":
		c.unimplemented(loc, state, "the service integration '%s' is not implemented by sfnlocal (it implements lambda:invoke and lambda:invoke.waitForTaskToken)", resource)
	default:
		c.unimplemented(loc, state, "the resource '%s' is not implemented by sfnlocal (it implements lambda:invoke and lambda:invoke.waitForTaskToken)", arn)
	}
	return Resource{}
}

// lambdaInvokeFields are the Invoke request fields that sfnlocal implements: what
// statemachines/ passes. The service's others are refused by name.
var lambdaInvokeFields = set("FunctionName", "Payload")

// serviceInvokeFields are the Invoke request fields of the service that sfnlocal
// refuses: our state machines call the function's unqualified name synchronously.
var serviceInvokeFields = set("Qualifier", "InvocationType", "ClientContext", "LogType")

func (c *checker) lambdaParameters(st *State, m map[string]any, loc string) {
	params, ok := m["Parameters"].(map[string]any)
	if !ok {
		if _, present := m["Parameters"]; present {
			c.fail(loc+"/Parameters", codeSchema, "The value for the field 'Parameters' must be an OBJECT")
		} else {
			c.fail(loc, codeSchema, "The field 'FunctionName' is required but was missing at /Parameters")
		}
		return
	}
	hasName := false
	for _, k := range sortedKeys(params) {
		name := strings.TrimSuffix(k, ".$")
		switch {
		case serviceInvokeFields[name]:
			c.unimplemented(loc+"/Parameters/"+k, st.Name, "lambda:invoke parameter '%s' is not implemented by sfnlocal (it implements FunctionName and Payload)", k)
		case !lambdaInvokeFields[name]:
			c.fail(loc+"/Parameters", codeSchema, "The field '%s' is not supported by Step Functions", k)
		}
		hasName = hasName || name == "FunctionName"
	}
	if !hasName {
		c.fail(loc+"/Parameters", codeSchema, "The field 'FunctionName' is required but was missing")
	}
	if st.Resource.Kind == ResourceLambdaInvokeWaitForTaskToken && st.Parameters != nil && !st.Parameters.UsesTaskToken() {
		c.fail(loc+"/Parameters", codeSchema, "The 'Parameters' field must pass the task token ($$.Task.Token) for '.waitForTaskToken'")
	}
}

func (c *checker) choice(st *State, m map[string]any, loc string) {
	if !c.required(m, loc, "Choices") {
		return
	}
	st.Default, _ = c.str(m, "Default", loc)
	arr, ok := c.array(m, "Choices", loc)
	if !ok {
		return
	}
	for i, v := range arr {
		st.Choices = append(st.Choices, c.parseChoiceRule(v, fmt.Sprintf("%s/Choices/%d", loc, i), st.Name))
	}
}

// wait reads TimestampPath, the only form of Wait our state machine uses (the engine
// computes each deadline once and stores it); Seconds, SecondsPath and Timestamp are
// refused by fields.
func (c *checker) wait(st *State, m map[string]any, loc string) {
	for _, refused := range []string{"Seconds", "SecondsPath", "Timestamp"} {
		if _, ok := m[refused]; ok {
			return
		}
	}
	if !c.required(m, loc, "TimestampPath") {
		return
	}
	st.TimestampPath, _ = c.path(m, "TimestampPath", loc, st.Name)
}

func (c *checker) optionalStr(m map[string]any, key, loc string) *string {
	if s, ok := c.str(m, key, loc); ok {
		return &s
	}
	return nil
}

// WaitUntil resolves a Wait state's deadline from its effective input.
func (st *State) WaitUntil(input any) (time.Time, error) {
	v, err := st.TimestampPath.Get(input)
	if err != nil {
		return time.Time{}, Runtimef("The TimestampPath parameter does not reference an input value: %s", st.TimestampPath)
	}
	s, _ := v.(string)
	t, err := ParseTimestamp(s)
	if err != nil {
		return time.Time{}, Runtimef("The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", st.TimestampPath, javaString(v))
	}
	return t, nil
}
