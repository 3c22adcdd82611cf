package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/myriarch/myriarch/adapters/api"
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
	page := pageResources(s)
	for id, m := range methods {
		p := m.Properties
		if rs := refs(p["ResourceId"]); len(rs) == 1 && page[rs[0]] != "" {
			continue // the web page: TestAPI_PageWithoutTheAuthorizer
		}
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

// pageResources are the API's resources of the web page: /ui and
// /ui/{proxy+}, by logical id.
func pageResources(s *synthesis) map[string]string {
	out := map[string]string{}
	resources := s.ofType("AWS::ApiGateway::Resource")
	for id, r := range resources {
		if r.Properties["PathPart"] == pagePath && len(refs(r.Properties["ParentId"])) == 1 && resources[refs(r.Properties["ParentId"])[0]].Type == "" {
			out[id] = "/" + pagePath // its parent is the root, no Resource of the template
		}
	}
	for id, r := range resources {
		if r.Properties["PathPart"] == "{proxy+}" && len(refs(r.Properties["ParentId"])) == 1 && out[refs(r.Properties["ParentId"])[0]] != "" {
			out[id] = "/" + pagePath + "/{proxy+}"
		}
	}
	return out
}

// The browser loads the page without a token, so its two routes go to the
// api function without the authorizer, for GET only; every other route
// keeps it (TestAPI_ProxiedBehindTheAuthorizer).
func TestAPI_PageWithoutTheAuthorizer(t *testing.T) {
	s := synthesized(t, nil)
	apiID, _ := s.function(t, fnAPI)
	page := pageResources(s)
	if len(page) != 2 {
		t.Fatalf("page resources %v, want /ui and /ui/{proxy+}", page)
	}
	found := map[string]bool{}
	for id, m := range s.ofType("AWS::ApiGateway::Method") {
		p := m.Properties
		rs := refs(p["ResourceId"])
		if len(rs) != 1 || page[rs[0]] == "" {
			continue
		}
		path := page[rs[0]]
		found[path] = true
		if p["HttpMethod"] != "GET" || p["AuthorizationType"] != "NONE" || p["AuthorizerId"] != nil {
			t.Errorf("method %s on %s: %v %v authorizer %v, want GET without an authorizer", id, path, p["HttpMethod"], p["AuthorizationType"], p["AuthorizerId"])
		}
		integration := p["Integration"].(map[string]any)
		if integration["Type"] != "AWS_PROXY" || !contains(refs(integration["Uri"]), apiID) {
			t.Errorf("method %s on %s: integration %v, want a proxy to the api function", id, path, integration["Type"])
		}
	}
	if !found["/ui"] || !found["/ui/{proxy+}"] {
		t.Errorf("methods on %v, want both page resources", found)
	}
	must(t, "the page's URL is an output", func() {
		s.template.HasOutput(jsii.String("PageUrl"), map[string]any{"Value": assertions.Match_AnyValue()})
	})
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
