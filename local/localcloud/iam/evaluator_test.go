package iam

import (
	"context"
	"encoding/json"
	"testing"
)

const session = "arn:aws:sts::123456789012:assumed-role/r/local"

func TestDecide_AllowAndImplicitDeny(t *testing.T) {
	allow := json.RawMessage(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:Get*","Resource":"arn:aws:dynamodb:us-east-1:123456789012:table/agents"}]}`)
	for _, tc := range []struct {
		action, resource string
		want             Decision
	}{
		{action: "dynamodb:GetItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/agents", want: Decision{true, "Allowed"}},
		{action: "dynamodb:PutItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/agents", want: Decision{false, "ImplicitlyDenied"}},
		{action: "dynamodb:GetItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/other", want: Decision{false, "ImplicitlyDenied"}},
	} {
		got, err := evaluator.Decide(context.Background(), Request{Principal: session, Action: tc.action, Resource: tc.resource,
			Account: "123456789012", IdentityPolicies: []json.RawMessage{allow}})
		if err != nil || got != tc.want {
			t.Errorf("%s on %s: %+v, %v; want %+v", tc.action, tc.resource, got, err, tc.want)
		}
	}
}

func TestDecide_ExplicitDenyWins(t *testing.T) {
	allow := json.RawMessage(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:*","Resource":"*"}]}`)
	deny := json.RawMessage(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"dynamodb:DeleteItem","Resource":"*"}]}`)
	got, err := evaluator.Decide(context.Background(), Request{Principal: session, Action: "dynamodb:DeleteItem",
		Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/agents", Account: "123456789012",
		IdentityPolicies: []json.RawMessage{allow, deny}})
	if err != nil || got != (Decision{false, "ExplicitlyDenied"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestDecide_UnknownActionIsAnError(t *testing.T) {
	_, err := evaluator.Decide(context.Background(), Request{Principal: session, Action: "dynamodb:Frobnicate",
		Resource: "*", Account: "123456789012", IdentityPolicies: []json.RawMessage{json.RawMessage(`{"Version":"2012-10-17","Statement":[]}`)}})
	if err == nil {
		t.Fatal("an action IAM does not know was evaluated")
	}
}

func TestDecide_CachesEachRequestOnce(t *testing.T) {
	e, err := StartEvaluator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := Request{Principal: session, Action: "dynamodb:GetItem", Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/agents",
		Account: "123456789012", IdentityPolicies: []json.RawMessage{json.RawMessage(`{"Version":"2012-10-17","Statement":[]}`)}}
	for range 3 {
		if _, err := e.Decide(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	// A closed sidecar cannot answer: a fourth answer comes from the cache.
	e.stdin.Close()
	<-e.exited
	if _, err := e.Decide(context.Background(), req); err != nil {
		t.Fatalf("the repeated request was not cached: %v", err)
	}
	req.Action = "dynamodb:PutItem"
	if _, err := e.Decide(context.Background(), req); err == nil {
		t.Fatal("a new request was answered without the evaluator")
	}
}

func TestPolicyAllows_AuthorizerPolicy(t *testing.T) {
	policy := json.RawMessage(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"execute-api:Invoke","Resource":"arn:aws:execute-api:us-east-1:123456789012:abc123/dev/*"},
		{"Effect":"Deny","Action":"execute-api:Invoke","Resource":"arn:aws:execute-api:us-east-1:123456789012:abc123/dev/DELETE/*"}]}`)
	for resource, want := range map[string]bool{
		"arn:aws:execute-api:us-east-1:123456789012:abc123/dev/GET/api/v1/rollouts":      true,
		"arn:aws:execute-api:us-east-1:123456789012:abc123/dev/DELETE/api/v1/rollouts/1": false, // explicit deny
		"arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/api/v1/rollouts":     false, // another stage
	} {
		got, err := evaluator.PolicyAllows(context.Background(), policy, "execute-api:Invoke", resource)
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", resource, got, err, want)
		}
	}
}
