package iam

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestUnused_FindsTheGrantsNobodyUsed(t *testing.T) {
	p := testPolicies(t)
	calls := []Call{
		{Role: "Roleengine", Action: "dynamodb:GetItem", Resource: table + "agents", Allowed: true},
		{Role: "Roleengine", Action: "dynamodb:Query", Resource: table + "agents/index/assignment", Allowed: true},
		// a denied call uses nothing
		{Role: "Roleengine", Action: "dynamodb:PutItem", Resource: table + "agents", Allowed: false},
		// another role's call uses none of the engine's grants
		{Role: "Roleapigw", Action: "dynamodb:UpdateItem", Resource: table + "rollouts", Allowed: true},
		// wildcards: the stream grant is ".../stream/*", the planner's ARN has a ":*" form
		{Role: "Roleengine", Action: "dynamodb:GetRecords", Resource: table + "agents/stream/2026-01-01T00:00:00.000", Allowed: true},
		{Role: "Roleengine", Action: "lambda:invokefunction", Resource: "arn:aws:lambda:us-east-1:123456789012:function:Test-Functionplanner:live", Allowed: true},
	}
	unused := map[string]Grant{}
	for _, g := range Unused(p, calls) {
		unused[g.Role+" "+g.Action+" "+g.Resource] = g
	}
	for _, used := range []string{
		"Roleengine dynamodb:GetItem " + table + "agents",
		"Roleengine dynamodb:Query " + table + "agents/index/assignment",
		"Roleengine dynamodb:GetRecords " + table + "agents/stream/*",
		"Roleengine lambda:InvokeFunction arn:aws:lambda:us-east-1:123456789012:function:Test-Functionplanner:*",
	} {
		if _, ok := unused[used]; ok {
			t.Errorf("a used grant is reported: %s", used)
		}
	}
	want := map[string]Grant{
		"Roleengine dynamodb:PutItem " + table + "agents":      {Role: "Roleengine", Action: "dynamodb:PutItem", Resource: table + "agents", Sid: "Agents", Source: "policy:RoleengineDefaultPolicy"},
		"Roleengine dynamodb:UpdateItem " + table + "rollouts": {Role: "Roleengine", Action: "dynamodb:UpdateItem", Resource: table + "rollouts", Sid: "Rollouts", Source: "policy:RoleengineDefaultPolicy"},
		"Roleapigw logs:PutLogEvents *": {Role: "Roleapigw", Action: "logs:PutLogEvents", Resource: "*",
			Source: "managed:arn:aws:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"},
		"Roleengine lambda:InvokeFunction arn:aws:lambda:us-east-1:123456789012:function:Test-Functionplanner": {Role: "Roleengine",
			Action: "lambda:InvokeFunction", Resource: "arn:aws:lambda:us-east-1:123456789012:function:Test-Functionplanner", Sid: "Planner", Source: "policy:RoleengineDefaultPolicy"},
	}
	for k, g := range want {
		if unused[k] != g {
			t.Errorf("%s: got %+v, want %+v", k, unused[k], g)
		}
	}
	for k := range unused {
		if k == "Roleengine dynamodb:DeleteItem *" {
			t.Error("a Deny statement is reported as a grant")
		}
	}
}

func TestUnused_NotActionStatement(t *testing.T) {
	p := &Policies{Roles: map[string]*Role{"R": {LogicalID: "R", Documents: []Document{{Source: "inline", Policy: json.RawMessage(
		`{"Statement":{"Effect":"Allow","NotAction":["iam:*","sts:*"],"Resource":"*"}}`)}}}}}
	g := Grant{Role: "R", Action: "NotAction:iam:*,sts:*", Resource: "*", Source: "inline"}
	if got := Unused(p, []Call{{Role: "R", Action: "iam:PassRole", Resource: "*", Allowed: true}}); !reflect.DeepEqual(got, []Grant{g}) {
		t.Errorf("an excluded action used the grant: %+v", got)
	}
	if got := Unused(p, []Call{{Role: "R", Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Allowed: true}}); len(got) != 0 {
		t.Errorf("an action outside NotAction did not use the grant: %+v", got)
	}
}
