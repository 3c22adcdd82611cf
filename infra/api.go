package main

import (
	"encoding/json"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/api"
)

// authorizerCacheSeconds bounds how long a revoked token still passes the
// authorizer: API Gateway caches its answer per token for this long.
const authorizerCacheSeconds = 60

// newAPI is the operators' REST API: every path and method proxied to the
// api function (its router serves /api/v1/...), each request first through
// the token authorizer; throttled per stage, access logs in JSON, traced.
// Refusals API Gateway answers itself are problem+json like the api's own.
// The web page under /ui/ goes to the same function without the
// authorizer (addPage).
func newAPI(scope constructs.Construct, c Config, fns Functions) awsapigateway.RestApi {
	authorizer := awsapigateway.NewTokenAuthorizer(scope, jsii.String("Authorizer"), &awsapigateway.TokenAuthorizerProps{
		Handler:         fns[fnAuthorizer],
		IdentitySource:  awsapigateway.IdentitySource_Header(jsii.String("Authorization")),
		ValidationRegex: jsii.String(`^Bearer [-0-9A-Za-z._~+/]+=*$`), // refused without invoking the Lambda
		ResultsCacheTtl: awscdk.Duration_Seconds(jsii.Number(authorizerCacheSeconds)),
	})
	accessLogs := awslogs.NewLogGroup(scope, jsii.String("Logs-api-access"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	rest := awsapigateway.NewLambdaRestApi(scope, jsii.String("Api"), &awsapigateway.LambdaRestApiProps{
		RestApiName: jsii.String("myriarch-" + c.Stage),
		Description: jsii.String("Myriarch operators' REST API (/api/v1)"),
		Handler:     fns[fnAPI],
		Proxy:       jsii.Bool(true),
		DefaultMethodOptions: &awsapigateway.MethodOptions{
			Authorizer:        authorizer,
			AuthorizationType: awsapigateway.AuthorizationType_CUSTOM,
		},
		EndpointTypes: &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		// Access logs need the account's API Gateway CloudWatch role; this creates it
		// (one per account and region, kept when the stack is deleted).
		CloudWatchRole:              jsii.Bool(true),
		CloudWatchRoleRemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(c.Stage),
			ThrottlingRateLimit:  jsii.Number(float64(c.APIRateLimit)),
			ThrottlingBurstLimit: jsii.Number(float64(c.APIBurstLimit)),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_JsonWithStandardFields(standardAccessLogFields()),
			MetricsEnabled:       jsii.Bool(true),
			TracingEnabled:       jsii.Bool(true),
		},
	})
	addPage(rest, fns[fnAPI])
	for _, r := range gatewayRefusals() {
		response := rest.AddGatewayResponse(jsii.String("Refusal"+r.status()), &awsapigateway.GatewayResponseOptions{
			Type:       r.kind,
			StatusCode: jsii.String(r.status()),
			Templates:  &map[string]*string{"application/json": jsii.String(r.body())},
		})
		// One override per header, in name order: a Go map handed to CDK
		// would order the template's keys differently on every synth.
		cfn := response.Node().DefaultChild().(awscdk.CfnResource)
		headers := r.headers()
		for _, name := range sortedKeys(headers) {
			path := `ResponseParameters.gatewayresponse\.header\.` + name
			cfn.AddPropertyOverride(jsii.String(path), jsii.String(headers[name]))
		}
	}
	return rest
}

// pagePath is where the api function serves the web page (adapters/ui).
const pagePath = "ui"

// addPage routes GET /ui and GET /ui/{proxy+} to the api function without
// the token authorizer: a browser loads the page and its assets with no
// token (the page asks for one), and the page then sends the token with
// every call of /api/v1, which keeps the authorizer. These resources are
// more specific than the root's {proxy+}, so API Gateway takes them for
// the page's paths and only for those. CDK gives every method the API's
// default authorizer and refuses NONE beside it, so the methods are
// created with it and the template then says NONE without an authorizer.
func addPage(rest awsapigateway.RestApi, fn awslambda.IFunction) {
	integration := awsapigateway.NewLambdaIntegration(fn, nil)
	page := rest.Root().AddResource(jsii.String(pagePath), nil)
	for _, res := range []awsapigateway.IResource{page, page.AddResource(jsii.String("{proxy+}"), nil)} {
		m := res.AddMethod(jsii.String("GET"), integration, nil)
		cfn := m.Node().DefaultChild().(awscdk.CfnResource)
		cfn.AddPropertyOverride(jsii.String("AuthorizationType"), jsii.String("NONE"))
		cfn.AddPropertyDeletionOverride(jsii.String("AuthorizerId"))
	}
}

func standardAccessLogFields() *awsapigateway.JsonWithStandardFieldProps {
	on := jsii.Bool(true)
	return &awsapigateway.JsonWithStandardFieldProps{
		Caller: on, HttpMethod: on, Ip: on, Protocol: on, RequestTime: on,
		ResourcePath: on, ResponseLength: on, Status: on, User: on,
	}
}

// gatewayRefusal is an answer API Gateway gives without the api function,
// written as the api writes its own problems (adapters/api.Problem).
type gatewayRefusal struct {
	kind    awsapigateway.ResponseType
	problem api.Problem
}

// gatewayRefusals is a function, not a variable: CDK values are created in
// the jsii process, which must not start before main (or TestMain) runs.
func gatewayRefusals() []gatewayRefusal {
	refusal := func(kind awsapigateway.ResponseType, status int, code, title, detail string) gatewayRefusal {
		return gatewayRefusal{kind, api.Problem{Type: "https://myriarch.dev/problems/" + code, Title: title, Status: status, Code: code, Detail: detail}}
	}
	return []gatewayRefusal{
		refusal(awsapigateway.ResponseType_UNAUTHORIZED(), 401, api.CodeUnauthenticated, "Authentication is required", "A valid bearer token is required."),
		refusal(awsapigateway.ResponseType_ACCESS_DENIED(), 403, api.CodeForbidden, "A permission is missing", "The token was refused."),
		refusal(awsapigateway.ResponseType_THROTTLED(), 429, "throttled", "Too Many Requests", "The API's request rate limit was exceeded; retry later."),
	}
}

func (r gatewayRefusal) status() string { return strconv.Itoa(r.problem.Status) }

func (r gatewayRefusal) body() string {
	b, err := json.Marshal(r.problem)
	if err != nil {
		panic(err) // strings and ints only
	}
	return string(b)
}

// headers are the api's own headers of a problem (adapters/api.writeProblem),
// as API Gateway takes them: quoted static values.
func (r gatewayRefusal) headers() map[string]string {
	h := map[string]string{"Content-Type": "'application/problem+json'", "Cache-Control": "'no-store'"}
	if r.problem.Status == 401 {
		h["WWW-Authenticate"] = `'Bearer realm="myriarch"'`
	}
	return h
}
