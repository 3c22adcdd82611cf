package main

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/myriarch/myriarch/pkg/api"
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
