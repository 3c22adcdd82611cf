package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask/remote"
	"github.com/myriarch/myriarch/adapters/store"
)

var operator = api.Principal{Actor: "user:22222222-2222-4222-8222-222222222222", DisplayName: "Dana Operator", Role: api.RoleOperator}

// proxied sends an API Gateway proxy event through the adapter to the API,
// as Lambda does.
func proxied(t *testing.T, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	t.Helper()
	tokens, _ := api.NewTokenTable(nil)
	h, err := api.New(api.Deps{
		Store: (*store.Store)(nil), Actions: enginetask.Evaluator{}, SFN: sfn.New(sfn.Options{}), Planning: remote.Lambda{},
		Catalog: api.StaticCatalog{}, Auth: tokens, Trusted: fromAuthorizer,
		Clock: func() time.Time { return time.Time{} }, NewID: newID, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpadapter.New(h).ProxyWithContext(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestProxy_TrustsTheAuthorizersPrincipal(t *testing.T) {
	ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/api/v1/me",
		RequestContext: events.APIGatewayProxyRequestContext{Authorizer: api.AuthorizerContext(operator)}}
	resp := proxied(t, ev)
	var me struct{ Actor, Role string }
	if err := json.Unmarshal([]byte(resp.Body), &me); err != nil || resp.StatusCode != 200 || me.Actor != operator.Actor || me.Role != "operator" {
		t.Errorf("answer %d %s, want the authorizer's operator", resp.StatusCode, resp.Body)
	}
}

func TestProxy_WithoutAuthorizerContextTheTokenDecides(t *testing.T) {
	ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/api/v1/me", Headers: map[string]string{"Authorization": "Bearer unknown"}}
	if resp := proxied(t, ev); resp.StatusCode != 401 || !strings.Contains(resp.Body, `"code":"unauthenticated"`) {
		t.Errorf("answer %d %s, want 401 unauthenticated", resp.StatusCode, resp.Body)
	}
}

func TestBuild_NeedsTheTablePrefix(t *testing.T) {
	if _, err := build(context.Background(), func(string) string { return "" }, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "MYRIARCH_TABLE_PREFIX") {
		t.Errorf("build without a prefix: %v", err)
	}
}

func TestList(t *testing.T) {
	if got := strings.Join(list(" 0.161.0, ,0.162.0 "), "|"); got != "0.161.0|0.162.0" {
		t.Errorf("list = %q", got)
	}
}
