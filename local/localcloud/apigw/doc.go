// Package apigw is the local cloud's API Gateway: the template's REST API
// (v1) served as the service serves it, so that the functions behind it
// get the events AWS would send and clients get the answers AWS would
// give.
//
// From the template alone (AWS::ApiGateway::RestApi, ::Resource, ::Method,
// ::Authorizer, ::Stage, ::GatewayResponse) the front routes a request at
// http://host/<stage>/<path> to the most specific resource and its method
// (or ANY); runs the method's TOKEN authorizer (the identity header and
// its validation expression checked first, the answer cached per token for
// AuthorizerResultTtlInSeconds, its policy checked against each request's
// method ARN); invokes the AWS_PROXY integration's function with the proxy
// event; and maps the function's answer back. What API Gateway answers
// itself (no route, 401, 403, the authorizer's 500, 502, 504, 413) are
// gateway responses, with the template's overrides.
//
// Limits: 10 MB of request body; Lambda's 6 MB synchronous request (the
// event as JSON); the integration timeout (29 s, or the method's
// TimeoutInMillis).
//
// Not emulated, and refused by New where the template uses it: other
// authorizer types, integrations other than AWS_PROXY, API keys, request
// validators and models, resource policies, OpenAPI bodies, Velocity in
// gateway responses beyond $context.error.* and $context.requestId.
// The stage's throttling (MethodSettings for /* and *) is a token bucket
// of its rate and burst, answered with THROTTLED (429); throttling of one
// method alone is refused. Accepted and ignored: the stage's logging and
// metrics settings, access logs, tracing, the deployment and the account.
// Header names reach the function in Go's canonical form, where API
// Gateway keeps the client's spelling; a request without body has "" in
// the event where API Gateway has null.
package apigw
