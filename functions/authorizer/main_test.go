package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/myriarch/myriarch/adapters/api"
)

func TestAuthorize(t *testing.T) {
	token, entry, err := api.MintToken(api.Principal{Actor: "token:0b4c3a1e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", DisplayName: "CI pipeline", Role: api.RoleOperator})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := api.NewTokenTable([]api.TokenEntry{entry})
	if err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/POST/api/v1/rollouts/r1/actions/approve"
	res, err := authorize(tokens, events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token, MethodArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	st := res.PolicyDocument.Statement[0]
	if res.PrincipalID != "token:0b4c3a1e-1c2d-4e5f-8a9b-0c1d2e3f4a5b" || st.Effect != "Allow" || st.Resource[0] != "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*" {
		t.Fatalf("response %+v", res)
	}
	p, ok := api.PrincipalFromAuthorizer(res.Context)
	if !ok || p.Role != api.RoleOperator || p.DisplayName != "CI pipeline" {
		t.Fatalf("context %v: the api must read the principal back", res.Context)
	}
	for _, bad := range []string{"", "Bearer nope", token, "Basic " + token} {
		if _, err := authorize(tokens, events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: bad, MethodArn: arn}); err == nil || err.Error() != "Unauthorized" {
			t.Errorf("token %q: %v, want Unauthorized", bad, err)
		}
	}
}

// Without a token configuration (the default of the infra configuration)
// the authorizer starts and refuses every token with 401; a configuration
// that is set but invalid is an error at start.
func TestLoadTokens_NoneConfiguredRefusesEverything(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tokens, err := loadTokens(func(string) string { return "" }, log)
	if err != nil {
		t.Fatalf("no tokens configured: %v, want a table that refuses everything", err)
	}
	token, _, _ := api.MintToken(api.Principal{Actor: "token:x", Role: api.RoleAdmin})
	if _, err := authorize(tokens, events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token, MethodArn: "arn:aws:execute-api:eu-west-1:1:a/prod/GET/api/v1/fleets"}); err == nil || err.Error() != "Unauthorized" {
		t.Fatalf("a token with no table configured: %v, want Unauthorized", err)
	}
	bad := func(k string) string {
		if k == "MYRIARCH_TOKENS" {
			return "{not json"
		}
		return ""
	}
	if _, err := loadTokens(bad, log); err == nil {
		t.Fatal("an invalid token configuration must stop the authorizer")
	}
}
