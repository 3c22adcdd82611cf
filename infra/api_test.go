package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/myriarch/myriarch/pkg/api"
)

func TestAPI_ProxiedBehindTheAuthorizer(t *testing.T) {
	s := synthesized(t, nil)
	apiID, _ := s.function(t, fnAPI)
	authID, _ := s.function(t, fnAuthorizer)
	must(t, "token authorizer", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Authorizer"), map[string]any{
			"Type":                         "TOKEN",
			"IdentitySource":               "method.request.header.Authorization",
			"AuthorizerResultTtlInSeconds": authorizerCacheSeconds,
		})
	})
	authorizers := s.ofType("AWS::ApiGateway::Authorizer")
	for _, a := range authorizers {
		if !contains(refs(a.Properties["AuthorizerUri"]), authID) {
			t.Errorf("the authorizer does not invoke the authorizer function: %v", refs(a.Properties["AuthorizerUri"]))
		}
	}
	methods := s.ofType("AWS::ApiGateway::Method")
	if len(methods) == 0 {
		t.Fatal("no API methods")
	}
	for id, m := range methods {
		p := m.Properties
		if p["AuthorizationType"] != "CUSTOM" || len(refs(p["AuthorizerId"])) != 1 {
			t.Errorf("method %s: authorization %v %v, want the custom authorizer", id, p["AuthorizationType"], p["AuthorizerId"])
		}
		integration := p["Integration"].(map[string]any)
		if integration["Type"] != "AWS_PROXY" || !contains(refs(integration["Uri"]), apiID) {
			t.Errorf("method %s: integration %v, want a proxy to the api function", id, integration["Type"])
		}
	}
	must(t, "stage: throttling, access logs, tracing", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"StageName":        testStage,
			"TracingEnabled":   true,
			"AccessLogSetting": assertions.Match_ObjectLike(&map[string]any{"DestinationArn": assertions.Match_AnyValue(), "Format": assertions.Match_StringLikeRegexp(jsii.String("requestId"))}),
			"MethodSettings": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100, "HttpMethod": "*", "ResourcePath": "/*",
			})}),
		})
	})
	for _, r := range gatewayRefusals() {
		must(t, "problem+json for "+r.status(), func() {
			s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
				"StatusCode": r.status(),
				"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
					"gatewayresponse.header.Content-Type":  "'application/problem+json'",
					"gatewayresponse.header.Cache-Control": "'no-store'",
				}),
				"ResponseTemplates": map[string]any{"application/json": r.body()},
			})
		})
		if r.problem.Status == 401 {
			must(t, "a 401 names its scheme", func() {
				s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
					"StatusCode":         "401",
					"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{"gatewayresponse.header.WWW-Authenticate": `'Bearer realm="myriarch"'`}),
				})
			})
		}
		var problem api.Problem
		if err := json.Unmarshal([]byte(r.body()), &problem); err != nil || problem.Code == "" || problem.Type != "https://myriarch.dev/problems/"+problem.Code {
			t.Errorf("%s: %s is not a problem as the api writes them: %v", r.status(), r.body(), err)
		}
	}
	// The codes are those api/openapi.yaml documents.
	spec, err := os.ReadFile("../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range gatewayRefusals() {
		if !strings.Contains(string(spec), "| "+r.status()+" | `"+r.problem.Code+"`") {
			t.Errorf("api/openapi.yaml does not document %s %s", r.status(), r.problem.Code)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
