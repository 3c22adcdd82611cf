package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// authorize runs the method's TOKEN authorizer for a request: the token
// checked without a call, the cached answer for that token while its TTL
// lasts, else the function's; then its policy checked against this
// request's method ARN (a cached policy too, so that one written for
// another method denies this one, as in AWS). The result is the event's
// requestContext.authorizer.
func (f *Front) authorize(ctx context.Context, a *authorizer, h http.Header, methodArn string) (map[string]any, *failure) {
	tok, ok := a.token(h)
	if !ok {
		return nil, ptr(unauthorized())
	}
	start := f.opts.Now()
	out, cached := a.cache.get(tok, start)
	latency := time.Duration(0)
	if !cached {
		var fail *failure
		if out, fail = f.callAuthorizer(ctx, a, tok, methodArn); fail != nil {
			return nil, fail
		}
		latency = f.opts.Now().Sub(start)
		if a.ttl > 0 {
			a.cache.put(tok, out, start.Add(a.ttl))
		}
	}
	allowed, err := f.allows(ctx, out.policy, "execute-api:Invoke", methodArn)
	if err != nil {
		return nil, ptr(authorizerError(fmt.Errorf("authorizer policy: %w", err)))
	}
	if !allowed {
		return nil, ptr(accessDenied())
	}
	auth := map[string]any{"principalId": out.principalID, "integrationLatency": latency.Milliseconds()}
	for k, v := range out.context {
		auth[k] = v
	}
	return auth, nil
}

// callAuthorizer invokes the authorizer's function with the TOKEN event.
// Its error "Unauthorized" is a 401; any other failure a 500.
func (f *Front) callAuthorizer(ctx context.Context, a *authorizer, token, methodArn string) (authorizerOutput, *failure) {
	source := fmt.Sprintf("arn:%s:execute-api:%s:%s:%s/authorizers/%s", f.partition, f.region, f.account, f.api.id, a.id)
	if err := f.serviceMayInvoke(source, a.functionArn); err != nil {
		return authorizerOutput{}, ptr(authorizerError(err))
	}
	payload, _ := json.Marshal(events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: token, MethodArn: methodArn})
	res, err := f.invoke(ctx, a.functionArn, payload, f.opts.IntegrationTimeout)
	if err != nil {
		return authorizerOutput{}, ptr(authorizerError(err))
	}
	if res.FunctionError != "" {
		if errorMessage(res) == "Unauthorized" {
			return authorizerOutput{}, ptr(unauthorized())
		}
		return authorizerOutput{}, ptr(authorizerError(fmt.Errorf("authorizer failed: %s", errorMessage(res))))
	}
	out, err := parseAuthorizerOutput(res.Payload)
	if err != nil {
		return authorizerOutput{}, ptr(authorizerError(err))
	}
	return out, nil
}

// integrate sends the proxy event to the method's function and checks its
// answer.
func (f *Front) integrate(ctx context.Context, m *method, q request, methodArn string) (proxyResponse, *failure) {
	payload, err := json.Marshal(f.api.proxyEvent(q, f.account))
	if err != nil {
		return proxyResponse{}, ptr(integrationFailure(err))
	}
	if len(payload) > lambdaRequestBytes { // Lambda refuses it before the function runs
		return proxyResponse{}, ptr(requestTooLarge())
	}
	if err := f.serviceMayInvoke(methodArn, m.functionArn); err != nil {
		return proxyResponse{}, ptr(permissionMissing(err))
	}
	res, err := f.invoke(ctx, m.functionArn, payload, m.timeout)
	var tooLarge *lambdatypes.RequestTooLargeException
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return proxyResponse{}, ptr(integrationTimeout())
	case errors.Is(err, ErrRequestTooLarge) || errors.As(err, &tooLarge):
		return proxyResponse{}, ptr(requestTooLarge())
	case err != nil:
		return proxyResponse{}, ptr(integrationFailure(err))
	case res.FunctionError != "":
		return proxyResponse{}, ptr(integrationFailure(fmt.Errorf("function failed: %s", errorMessage(res))))
	}
	p, err := parseProxyResponse(res.Payload)
	if err != nil {
		return proxyResponse{}, ptr(integrationFailure(err))
	}
	return p, nil
}

// invoke calls the function and gives up after timeout, as API Gateway
// does, whether or not the Invoker honours the context: the function may
// go on running, its answer is dropped.
func (f *Front) invoke(ctx context.Context, fn string, payload []byte, timeout time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := f.inv.Invoke(ctx, fn, payload)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && ctx.Err() != nil {
			return Result{}, fmt.Errorf("invoke %s: %w", fn, ctx.Err())
		}
		return o.res, o.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("invoke %s: %w", fn, ctx.Err())
	}
}

// errorMessage is a failed invocation's message: the Result's, else the
// payload's errorMessage ({"errorMessage": ..., "errorType": ...}).
func errorMessage(res Result) string {
	if res.ErrorMessage != "" {
		return res.ErrorMessage
	}
	var p struct {
		ErrorMessage string `json:"errorMessage"`
	}
	_ = json.Unmarshal(res.Payload, &p)
	return p.ErrorMessage
}
