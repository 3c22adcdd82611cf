package iam

import (
	"context"
	"encoding/json"
	"testing"
)

// A task response granted on the state machine is allowed for tokens of
// that machine and no other, as the service decides, although the
// evaluator takes SendTaskSuccess on "*" only.
func TestNarrowedTo_TaskResponseOnTheStateMachine(t *testing.T) {
	const machine = "arn:aws:states:us-east-1:123456789012:stateMachine:rollout"
	policy := json.RawMessage(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"states:SendTaskSuccess","Resource":"` + machine + `"},
		{"Effect":"Allow","Action":"dynamodb:GetItem","Resource":"arn:aws:dynamodb:us-east-1:123456789012:table/t"}]}`)
	decide := func(resource string) bool {
		t.Helper()
		narrowed, err := narrowedTo([]json.RawMessage{policy}, resource)
		if err != nil {
			t.Fatal(err)
		}
		d, err := evaluator.Decide(context.Background(), Request{Principal: "arn:aws:sts::123456789012:assumed-role/r/local",
			Action: "states:SendTaskSuccess", Resource: "*", Account: "123456789012", IdentityPolicies: narrowed})
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	if !decide(machine) {
		t.Error("SendTaskSuccess for a token of the granted state machine is denied")
	}
	if decide("arn:aws:states:us-east-1:123456789012:stateMachine:other") {
		t.Error("SendTaskSuccess for a token of another state machine is allowed")
	}
}

// A Deny that names the machine still wins; NotResource is read the other
// way round.
func TestNarrowedTo_DenyAndNotResource(t *testing.T) {
	const machine = "arn:aws:states:us-east-1:123456789012:stateMachine:rollout"
	policy := json.RawMessage(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"states:*","Resource":"*"},
		{"Effect":"Deny","Action":"states:SendTaskSuccess","NotResource":"arn:aws:states:us-east-1:123456789012:stateMachine:other"}]}`)
	narrowed, err := narrowedTo([]json.RawMessage{policy}, machine)
	if err != nil {
		t.Fatal(err)
	}
	d, err := evaluator.Decide(context.Background(), Request{Principal: "arn:aws:sts::123456789012:assumed-role/r/local",
		Action: "states:SendTaskSuccess", Resource: "*", Account: "123456789012", IdentityPolicies: narrowed})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed {
		t.Error("a Deny with a NotResource that leaves the machine out does not deny it")
	}
}
