package asl

import (
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

var stateFields = map[string]map[string]bool{
	TypePass:     set("Type", "Comment", "QueryLanguage", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"),
	TypeTask:     set("Type", "Comment", "QueryLanguage", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Retry", "Catch", "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath"),
	TypeChoice:   set("Type", "Comment", "QueryLanguage", "InputPath", "OutputPath", "Choices", "Default"),
	TypeWait:     set("Type", "Comment", "QueryLanguage", "Next", "End", "InputPath", "OutputPath", "Seconds", "SecondsPath", "Timestamp", "TimestampPath"),
	TypeSucceed:  set("Type", "Comment", "QueryLanguage", "InputPath", "OutputPath"),
	TypeFail:     set("Type", "Comment", "QueryLanguage", "Error", "ErrorPath", "Cause", "CausePath"),
	TypeParallel: set("Type", "Comment", "QueryLanguage", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Retry", "Catch", "Branches"),
	TypeMap:      set("Type", "Comment", "QueryLanguage", "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Retry", "Catch", "Iterator", "ItemProcessor", "ItemsPath", "ItemSelector", "MaxConcurrency", "MaxConcurrencyPath"),
}

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
	c := &checker{names: map[string]string{}}
	d := &Definition{}
	c.fields(m, "/", set("Comment", "StartAt", "States", "Version", "TimeoutSeconds", "QueryLanguage"))
	d.Comment, _ = c.str(m, "Comment", "")
	if version, ok := c.str(m, "Version", ""); ok && version != "1.0" {
		c.fail("/Version", codeSchema, "The value for the field 'Version' must be '1.0'")
	}
	d.TimeoutSeconds, _ = c.integer(m, "TimeoutSeconds", "", 1, maxSeconds)
	c.queryLanguage(m, "")
	if machine := c.machine(m, ""); machine != nil {
		d.Machine = *machine
	}
	if len(c.problems) > 0 {
		return nil, &DefinitionError{Problems: c.problems}
	}
	return d, nil
}

func (c *checker) queryLanguage(m map[string]any, loc string) {
	if ql, ok := c.str(m, "QueryLanguage", loc); ok {
		switch ql {
		case "JSONPath":
		case "JSONata":
			c.fail(loc+"/QueryLanguage", codeUnsupported, "The query language 'JSONata' is not supported by sfnlocal")
		default:
			c.fail(loc+"/QueryLanguage", codeSchema, "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]")
		}
	}
}

// machine parses StartAt and States (of the top level, a branch or an item processor)
// and checks transitions, reachability and that the machine can end.
func (c *checker) machine(m map[string]any, loc string) *Machine {
	at := loc
	if at == "" {
		at = "/"
	}
	if !c.required(m, at, "StartAt", "States") {
		return nil
	}
	mc := &Machine{States: map[string]*State{}}
	mc.StartAt, _ = c.str(m, "StartAt", loc)
	states, ok := c.object(m, "States", loc)
	if !ok {
		return nil
	}
	if len(states) == 0 {
		c.fail(loc+"/States", codeSchema, "Value cannot be empty")
		return nil
	}
	for _, name := range sortedKeys(states) {
		if st := c.state(name, states[name], loc+"/States/"+name); st != nil {
			mc.States[name] = st
		}
	}
	if _, ok := states[mc.StartAt]; !ok {
		c.fail(loc+"/StartAt", codeTarget, "Missing 'Next' target: %s", mc.StartAt)
	}
	c.transitions(mc, loc)
	return mc
}

func (c *checker) transitions(mc *Machine, loc string) {
	target := func(from, field, next string) {
		if _, ok := mc.States[next]; !ok {
			c.fail(loc+"/States/"+from+"/"+field, codeTarget, "Missing 'Next' target: %s", next)
		}
	}
	terminal := false
	for _, name := range sortedNames(mc.States) {
		st := mc.States[name]
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
	// Reachability from StartAt.
	seen := map[string]bool{}
	queue := []string{mc.StartAt}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		st, ok := mc.States[name]
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
	if _, ok := mc.States[mc.StartAt]; ok {
		for _, name := range sortedNames(mc.States) {
			if !seen[name] {
				c.fail(loc+"/States/"+name, codeUnreachable, "State \"%s\" is not reachable", name)
			}
		}
	}
	if !terminal && len(mc.States) > 0 {
		c.fail(loc+"/States", codeNoTerminal, "No terminal state (Succeed, Fail or End) in the state machine")
	}
}

func (c *checker) state(name string, v any, loc string) *State {
	if prev, dup := c.names[name]; dup {
		c.fail(loc, codeDuplicate, "Duplicate State name: %s (also at %s)", name, prev)
	}
	c.names[name] = loc
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
	if !ok {
		c.fail(loc+"/Type", codeSchema, "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]")
		return nil
	}
	c.fields(m, loc, fields)
	c.queryLanguage(m, loc)
	c.transition(st, m, loc, fields["End"])
	st.InputPath = c.pathField(m, "InputPath", loc, false, false)
	st.OutputPath = c.pathField(m, "OutputPath", loc, false, false)
	st.ResultPath = c.pathField(m, "ResultPath", loc, true, true)
	st.Parameters = c.template(m, "Parameters", loc)
	st.ResultSelector = c.template(m, "ResultSelector", loc)
	st.Result, st.HasResult = m["Result"]
	if fields["Retry"] {
		st.Retry = c.retriers(m, loc)
		st.Catch = c.catchers(m, loc)
	}
	switch st.Type {
	case TypeTask:
		c.task(st, m, loc)
	case TypeChoice:
		c.choice(st, m, loc)
	case TypeWait:
		c.wait(st, m, loc)
	case TypeFail:
		c.failState(st, m, loc)
	case TypeParallel:
		c.parallel(st, m, loc)
	case TypeMap:
		c.mapState(st, m, loc)
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

func (c *checker) retriers(m map[string]any, loc string) []Retrier {
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
		c.fields(rm, at, set("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment"))
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
		if js, ok := c.str(rm, "JitterStrategy", at); ok {
			switch js {
			case "NONE":
			case "FULL":
				c.fail(at+"/JitterStrategy", codeUnsupported, "The JitterStrategy 'FULL' is not supported by sfnlocal (use NONE)")
			default:
				c.fail(at+"/JitterStrategy", codeSchema, "The field 'JitterStrategy' should have one of these values: [FULL, NONE]")
			}
		}
		if contains(r.ErrorEquals, ErrorAll) && i != len(arr)-1 {
			c.fail(at+"/ErrorEquals", codeSchema, "A Retrier with 'States.ALL' must be the last Retrier")
		}
		out = append(out, r)
	}
	return out
}

func (c *checker) catchers(m map[string]any, loc string) []Catcher {
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
		c.fields(cm, at, set("ErrorEquals", "Next", "ResultPath", "Comment"))
		ct := Catcher{ErrorEquals: c.errorNames(cm, at)}
		if next, ok := c.str(cm, "Next", at); ok {
			ct.Next = next
		} else if _, present := cm["Next"]; !present {
			c.fail(at, codeSchema, "These fields are required: [Next]")
		}
		ct.ResultPath = c.pathField(cm, "ResultPath", at, true, true)
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
	st.Resource = c.resource(arn, loc+"/Resource")
	timeout, hasTimeout := c.integer(m, "TimeoutSeconds", loc, 1, maxSeconds)
	st.TimeoutSeconds = timeout
	st.TimeoutSecondsPath, _ = c.path(m, "TimeoutSecondsPath", loc, true)
	if hasTimeout && st.TimeoutSecondsPath != nil {
		c.fail(loc, codeSchema, "Only one of 'TimeoutSeconds' or 'TimeoutSecondsPath' can be present")
	}
	heartbeat, hasHeartbeat := c.integer(m, "HeartbeatSeconds", loc, 1, maxSeconds)
	st.HeartbeatSeconds = heartbeat
	st.HeartbeatSecondsPath, _ = c.path(m, "HeartbeatSecondsPath", loc, true)
	if hasHeartbeat && st.HeartbeatSecondsPath != nil {
		c.fail(loc, codeSchema, "Only one of 'HeartbeatSeconds' or 'HeartbeatSecondsPath' can be present")
	}
	if hasHeartbeat && hasTimeout && heartbeat >= timeout {
		c.fail(loc+"/HeartbeatSeconds", codeSchema, "HeartbeatSeconds must be smaller than TimeoutSeconds")
	}
	switch st.Resource.Kind {
	case ResourceLambdaInvoke, ResourceLambdaInvokeWaitForTaskToken:
		c.lambdaParameters(st, m, loc)
	}
}

// resource classifies a Task's Resource; every resource but Lambda is refused.
func (c *checker) resource(arn, loc string) Resource {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 6 || parts[0] != "arn" {
		c.fail(loc, codeSchema, "The value for the field 'Resource' must be a valid ARN")
		return Resource{}
	}
	service, resource := parts[2], strings.Join(parts[5:], ":")
	switch {
	case service == "lambda" && strings.HasPrefix(resource, "function:") && len(resource) > len("function:"):
		return Resource{ARN: arn, Kind: ResourceLambdaFunction}
	case service == "states" && resource == "lambda:invoke":
		return Resource{ARN: arn, Kind: ResourceLambdaInvoke}
	case service == "states" && resource == "lambda:invoke.waitForTaskToken":
		return Resource{ARN: arn, Kind: ResourceLambdaInvokeWaitForTaskToken}
	case service == "states" && strings.HasPrefix(resource, "activity:"):
		c.fail(loc, codeUnsupported, "Activities are not supported by sfnlocal: %s", arn)
	case service == "states" && strings.Contains(resource, ".sync"):
		c.fail(loc, codeUnsupported, "The '.sync' integration pattern is not supported by sfnlocal: %s", arn)
	case service == "states":
		c.fail(loc, codeUnsupported, "The service integration '%s' is not supported by sfnlocal (only Lambda: lambda:invoke, lambda:invoke.waitForTaskToken and function ARNs)", resource)
	default:
		c.fail(loc, codeUnsupported, "The resource '%s' is not supported by sfnlocal (only Lambda functions)", arn)
	}
	return Resource{}
}

// lambdaInvokeFields are the Invoke request fields that lambda:invoke accepts.
var lambdaInvokeFields = set("FunctionName", "Payload", "Qualifier", "InvocationType", "ClientContext", "LogType")

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
		if !lambdaInvokeFields[name] {
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
		st.Choices = append(st.Choices, c.parseChoiceRule(v, fmt.Sprintf("%s/Choices/%d", loc, i), true))
	}
}

func (c *checker) wait(st *State, m map[string]any, loc string) {
	n := 0
	for _, k := range []string{"Seconds", "SecondsPath", "Timestamp", "TimestampPath"} {
		if _, ok := m[k]; ok {
			n++
		}
	}
	if n != 1 {
		c.fail(loc, codeSchema, "Exactly one of 'Seconds', 'SecondsPath', 'Timestamp' or 'TimestampPath' is required")
	}
	if secs, ok := c.integer(m, "Seconds", loc, 0, maxSeconds); ok {
		st.Seconds = &secs
	}
	st.SecondsPath, _ = c.path(m, "SecondsPath", loc, true)
	if ts, ok := c.str(m, "Timestamp", loc); ok {
		t, err := ParseTimestamp(ts)
		if err != nil {
			c.fail(loc+"/Timestamp", codeSchema, "The value for the field 'Timestamp' must be a valid RFC 3339 timestamp: %s", ts)
		} else {
			st.Timestamp = &t
		}
	}
	st.TimestampPath, _ = c.path(m, "TimestampPath", loc, true)
}

func (c *checker) failState(st *State, m map[string]any, loc string) {
	if e, ok := c.str(m, "Error", loc); ok {
		st.Error = &e
	}
	if cause, ok := c.str(m, "Cause", loc); ok {
		st.Cause = &cause
	}
	st.ErrorPath = c.dynamic(m, "ErrorPath", loc)
	st.CausePath = c.dynamic(m, "CausePath", loc)
	if _, both := m["ErrorPath"]; both && st.Error != nil {
		c.fail(loc, codeSchema, "Only one of 'Error' or 'ErrorPath' can be present")
	}
	if _, both := m["CausePath"]; both && st.Cause != nil {
		c.fail(loc, codeSchema, "Only one of 'Cause' or 'CausePath' can be present")
	}
}

func (c *checker) parallel(st *State, m map[string]any, loc string) {
	if !c.required(m, loc, "Branches") {
		return
	}
	arr, ok := c.array(m, "Branches", loc)
	if !ok {
		return
	}
	for i, v := range arr {
		at := fmt.Sprintf("%s/Branches/%d", loc, i)
		bm, ok := v.(map[string]any)
		if !ok {
			c.fail(at, codeSchema, "A branch must be an OBJECT")
			continue
		}
		c.fields(bm, at, set("StartAt", "States", "Comment", "QueryLanguage"))
		c.queryLanguage(bm, at)
		if b := c.machine(bm, at); b != nil {
			st.Branches = append(st.Branches, b)
		}
	}
}

func (c *checker) mapState(st *State, m map[string]any, loc string) {
	_, hasIterator := m["Iterator"]
	_, hasProcessor := m["ItemProcessor"]
	switch {
	case hasIterator && hasProcessor:
		c.fail(loc, codeSchema, "Only one of 'ItemProcessor' or 'Iterator' can be present")
	case !hasIterator && !hasProcessor:
		c.fail(loc, codeSchema, "These fields are required: [ItemProcessor]")
	}
	if _, both := m["ItemSelector"]; both && st.Parameters != nil {
		c.fail(loc, codeSchema, "Only one of 'ItemSelector' or 'Parameters' can be present")
	}
	st.ItemSelector = c.template(m, "ItemSelector", loc)
	if st.ItemSelector == nil {
		// Parameters is the legacy name of ItemSelector on a Map state.
		st.ItemSelector, st.Parameters = st.Parameters, nil
	}
	st.ItemsPath = c.pathField(m, "ItemsPath", loc, true, false)
	st.MaxConcurrency, _ = c.integer(m, "MaxConcurrency", loc, 0, maxSeconds)
	st.MaxConcurrencyPath, _ = c.path(m, "MaxConcurrencyPath", loc, true)
	key := "ItemProcessor"
	if hasIterator {
		key = "Iterator"
	}
	pm, ok := c.object(m, key, loc)
	if !ok {
		return
	}
	at := loc + "/" + key
	c.fields(pm, at, set("StartAt", "States", "Comment", "ProcessorConfig", "QueryLanguage"))
	c.queryLanguage(pm, at)
	if cfg, ok := c.object(pm, "ProcessorConfig", at); ok {
		c.fields(cfg, at+"/ProcessorConfig", set("Mode", "ExecutionType"))
		if mode, ok := c.str(cfg, "Mode", at+"/ProcessorConfig"); ok && mode != "INLINE" {
			if mode == "DISTRIBUTED" {
				c.fail(at+"/ProcessorConfig/Mode", codeUnsupported, "Distributed Map (Mode DISTRIBUTED) is not supported by sfnlocal")
			} else {
				c.fail(at+"/ProcessorConfig/Mode", codeSchema, "The field 'Mode' should have one of these values: [INLINE, DISTRIBUTED]")
			}
		}
		if _, ok := cfg["ExecutionType"]; ok {
			c.fail(at+"/ProcessorConfig/ExecutionType", codeUnsupported, "ExecutionType (Distributed Map) is not supported by sfnlocal")
		}
	}
	st.Processor = c.machine(pm, at)
}

// WaitUntil resolves a Wait state's deadline from its effective input.
func (st *State) WaitUntil(input any, now time.Time) (time.Time, error) {
	switch {
	case st.Seconds != nil:
		return now.Add(time.Duration(*st.Seconds) * time.Second), nil
	case st.Timestamp != nil:
		return *st.Timestamp, nil
	case st.SecondsPath != nil:
		v, err := st.SecondsPath.Get(input)
		if err != nil {
			return time.Time{}, Runtimef("The SecondsPath parameter does not reference an input value: %s", st.SecondsPath)
		}
		secs, err := wholeSeconds(v)
		if err != nil {
			return time.Time{}, Runtimef("The SecondsPath parameter cannot be parsed as a long value: %s == %s", st.SecondsPath, Encode(v))
		}
		if secs < 0 {
			return time.Time{}, Runtimef("The SecondsPath parameter references a negative value: %s == %d", st.SecondsPath, secs)
		}
		if secs > maxSeconds {
			return time.Time{}, Runtimef("Wait state delay is too long.")
		}
		return now.Add(time.Duration(secs) * time.Second), nil
	case st.TimestampPath != nil:
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
	return now, nil
}
