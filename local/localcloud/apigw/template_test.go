package apigw

import (
	"strings"
	"testing"
)

// What the front would not serve as API Gateway does is an error of New
// that names it.
func TestNew_RefusesWhatItDoesNotEmulate(t *testing.T) {
	cases := []struct {
		name   string
		change func(res map[string]any)
		want   string
	}{
		{name: "REQUEST authorizer", change: func(res map[string]any) { props(res, "Auth")["Type"] = "REQUEST" }, want: `Auth: authorizer type "REQUEST"`},
		{name: "query identity", change: func(res map[string]any) { props(res, "Auth")["IdentitySource"] = "method.request.querystring.t" }, want: "IdentitySource"},
		{name: "IAM authorization", change: func(res map[string]any) { props(res, "UiGet")["AuthorizationType"] = "AWS_IAM" }, want: "UiGet: AuthorizationType AWS_IAM"},
		{name: "HTTP integration", change: func(res map[string]any) {
			props(res, "UiGet")["Integration"] = map[string]any{"Type": "HTTP_PROXY", "Uri": "http://example.invalid"}
		}, want: `UiGet: integration type "HTTP_PROXY"`},
		{name: "not a function URI", change: func(res map[string]any) {
			props(res, "UiGet")["Integration"].(map[string]any)["Uri"] = "arn:aws:apigateway:eu-west-1:sqs:path/q"
		}, want: "UiGet: URI"},
		{name: "API keys", change: func(res map[string]any) { props(res, "UiGet")["ApiKeyRequired"] = true }, want: "UiGet: ApiKeyRequired"},
		{name: "request validator", change: func(res map[string]any) { props(res, "UiGet")["RequestValidatorId"] = "v" }, want: "UiGet: property RequestValidatorId"},
		{name: "resource policy", change: func(res map[string]any) { props(res, "Api")["Policy"] = map[string]any{} }, want: "Api: property Policy"},
		{name: "usage plan", change: func(res map[string]any) {
			res["Plan"] = map[string]any{"Type": "AWS::ApiGateway::UsagePlan", "Properties": map[string]any{}}
		}, want: "Plan: AWS::ApiGateway::UsagePlan"},
		{name: "Velocity in a response", change: func(res map[string]any) {
			props(res, "Refusal401")["ResponseTemplates"] = map[string]any{"application/json": `{"m":"$input.path('$')"}`}
		}, want: "Refusal401: UNAUTHORIZED: response template uses $input"},
		{name: "header from the request", change: func(res map[string]any) {
			props(res, "Refusal401")["ResponseParameters"] = map[string]any{"gatewayresponse.header.X": "method.request.header.X"}
		}, want: "Refusal401: UNAUTHORIZED: response parameter"},
		{name: "greedy with a child", change: func(res map[string]any) {
			res["Under"] = map[string]any{"Type": "AWS::ApiGateway::Resource", "Properties": map[string]any{"ParentId": map[string]any{"Ref": "UiProxy"}, "PathPart": "x"}}
		}, want: "under the greedy {proxy+}"},
		{name: "bad path part", change: func(res map[string]any) { props(res, "Ui")["PathPart"] = "a{b}" }, want: `Ui: path part "a{b}"`},
		{name: "two stages", change: func(res map[string]any) {
			res["Stage2"] = map[string]any{"Type": "AWS::ApiGateway::Stage", "Properties": map[string]any{"StageName": "prod"}}
		}, want: "2 AWS::ApiGateway::Stage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(loadTemplate(t, c.change), &fakeLambda{}, simplePolicyAllows, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestNew_Stage(t *testing.T) {
	if got := newHarness(t, Options{}, nil).front.Stage(); got != "dev" {
		t.Errorf("stage %q", got)
	}
}
