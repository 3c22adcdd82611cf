// Command authorizer is API Gateway's token authorizer: it checks the bearer
// token against the hashed token table (the same check the API makes
// locally, api.TokenTable.Authenticate) and returns the principal in the
// policy's context, where the api Lambda reads it. A missing or unknown
// token is "Unauthorized" (API Gateway's 401).
//
// Environment: MYRIARCH_TOKENS or MYRIARCH_TOKENS_FILE (hashes only).
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/myriarch/myriarch/adapters/api"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	tokens, err := loadTokens(os.Getenv, log)
	if err != nil {
		log.Error("authorizer: start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(func(_ context.Context, req events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
		return authorize(tokens, req)
	})
}

// loadTokens is the token table of the environment. A deployment without
// tokens (the infra configuration's default) refuses every request with
// 401, as its docs say, rather than exiting at init, which API Gateway
// would answer with a 500 for every call; a token configuration that is
// set but invalid still stops the function.
func loadTokens(getenv func(string) string, log *slog.Logger) (*api.TokenTable, error) {
	tokens, err := api.LoadTokens(getenv)
	if errors.Is(err, api.ErrNoTokens) {
		log.Warn("authorizer: no API tokens are configured (apiTokens or apiTokensFile); every request is refused with 401")
		return api.NewTokenTable(nil)
	}
	return tokens, err
}

// errUnauthorized is the exact error text API Gateway turns into a 401.
var errUnauthorized = errors.New("Unauthorized")

// authorize allows the whole API for a known token; what the principal may
// do is the API's decision, from the role in the context.
func authorize(tokens *api.TokenTable, req events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	p, err := tokens.Authenticate(api.BearerToken(req.AuthorizationToken))
	if err != nil {
		return events.APIGatewayCustomAuthorizerResponse{}, errUnauthorized
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: p.Actor,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{{
			Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{apiWildcard(req.MethodArn)},
		}}},
		Context: api.AuthorizerContext(p),
	}, nil
}
