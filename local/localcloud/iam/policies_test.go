package iam

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

func TestFromTemplate_EveryPolicyOfARole(t *testing.T) {
	p := testPolicies(t)
	engine := p.Roles["Roleengine"]
	if engine == nil || engine.Name != "Test-Roleengine" || engine.Arn != "arn:aws:iam::123456789012:role/Test-Roleengine" {
		t.Fatalf("engine role: %+v", engine)
	}
	var sources []string
	for _, d := range engine.Documents {
		sources = append(sources, d.Source)
	}
	if got := strings.Join(sources, " "); got != "inline policy:RoleengineDefaultPolicy" {
		t.Errorf("engine's policies: %s", got)
	}
	apigw := p.Roles["Roleapigw"]
	if len(apigw.Documents) != 1 || apigw.Documents[0].Source != "managed:arn:aws:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs" ||
		!strings.Contains(string(apigw.Documents[0].Policy), "logs:PutLogEvents") {
		t.Errorf("apigw's managed policy: %+v", apigw.Documents)
	}
	if !strings.Contains(string(engine.AssumeRolePolicy), "lambda.amazonaws.com") {
		t.Errorf("assume role policy: %s", engine.AssumeRolePolicy)
	}
}

func TestFromTemplate_UnknownManagedPolicyIsAnError(t *testing.T) {
	tpl := testTemplate(t)
	tpl.Resources["Roleapigw"].Properties["ManagedPolicyArns"] = []any{"arn:aws:iam::aws:policy/AdministratorAccess"}
	if _, err := FromTemplate(tpl, evaluator); err == nil || !strings.Contains(err.Error(), "AdministratorAccess") {
		t.Fatalf("err = %v", err)
	}
}

func TestFromTemplate_PolicyOfAnUnknownRoleIsAnError(t *testing.T) {
	tpl := testTemplate(t)
	tpl.Resources["Extra"] = cfn.Resource{Type: "AWS::IAM::Policy", Properties: map[string]any{
		"PolicyDocument": map[string]any{"Statement": []any{}}, "Roles": []any{"Elsewhere-Role"}}}
	if _, err := FromTemplate(tpl, evaluator); err == nil || !strings.Contains(err.Error(), "Elsewhere-Role") {
		t.Fatalf("err = %v", err)
	}
}

func TestServiceMayInvoke_PermissionWithSourceArn(t *testing.T) {
	p := testPolicies(t)
	fn := "arn:aws:lambda:us-east-1:123456789012:function:Test-Functionplanner"
	rule := "arn:aws:events:us-east-1:123456789012:rule/Test-PlannerSchedule"
	for _, tc := range []struct {
		principal, source, fn string
		want                  bool
	}{
		{principal: "events.amazonaws.com", source: rule, fn: fn, want: true},
		{principal: "events.amazonaws.com", source: "arn:aws:events:us-east-1:123456789012:rule/Other", fn: fn, want: false}, // another rule
		{principal: "apigateway.amazonaws.com", source: rule, fn: fn, want: false},                                           // another service
		{principal: "events.amazonaws.com", source: rule, fn: fn + "x", want: false},                                         // a function without permissions
	} {
		got, err := p.ServiceMayInvoke(tc.principal, tc.source, tc.fn)
		if err != nil || got != tc.want {
			t.Errorf("%s from %s on %s: %v, %v; want %v", tc.principal, tc.source, tc.fn, got, err, tc.want)
		}
	}
}
