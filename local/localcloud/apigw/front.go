package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// Invoker invokes a Lambda function synchronously (RequestResponse).
type Invoker interface {
	Invoke(ctx context.Context, functionARN string, payload []byte) (Result, error)
}

// Result is a synchronous invocation's outcome.
type Result struct {
	Payload       []byte
	FunctionError string // non-empty when the function failed ("Unhandled")
	ErrorMessage  string // the error's message; read from Payload's errorMessage when empty
}

// ErrRequestTooLarge is what an Invoker wraps when Lambda refuses the
// payload (over its 6 MB synchronous request, RequestEntityTooLargeException).
var ErrRequestTooLarge = errors.New("lambda: request payload too large")

// PolicyAllows evaluates an authorizer's policy document for an action on
// a resource (the IAM evaluator's).
type PolicyAllows func(ctx context.Context, policy json.RawMessage, action, resource string) (bool, error)

// Options are what the template does not say.
type Options struct {
	Now func() time.Time // default time.Now
	// IntegrationTimeout is API Gateway's integration timeout (default
	// 29 s) when a method sets no TimeoutInMillis; also the authorizer's.
	IntegrationTimeout time.Duration
	// ServiceMayInvoke answers whether the function's resource policy
	// (AWS::Lambda::Permission) lets principal apigateway.amazonaws.com
	// invoke it from sourceArn; nil lets every invocation through.
	ServiceMayInvoke func(principal, sourceArn, functionArn string) (bool, error)
	Log              *slog.Logger // default slog.Default()
}

// Front serves the template's REST API as API Gateway does, its stage at
// the first path segment (http://host/<stage>/...). Safe for concurrent
// use.
type Front struct {
	api                        *restAPI
	inv                        Invoker
	allows                     PolicyAllows
	opts                       Options
	region, account, partition string
}

// Limits of API Gateway and Lambda that the front enforces.
const (
	maxRequestBytes       = 10 << 20 // API Gateway's 10 MB request payload
	lambdaRequestBytes    = 6 << 20  // Lambda's synchronous request: 6,291,456 bytes
	defaultIntegrationTTL = 29 * time.Second
	apiGatewayPrincipal   = "apigateway.amazonaws.com"
)

// New builds the front of the template's REST API; a template using what
// the front does not emulate is an error naming it.
func New(t *cfn.Template, inv Invoker, policyAllows PolicyAllows, opts Options) (*Front, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IntegrationTimeout <= 0 {
		opts.IntegrationTimeout = defaultIntegrationTTL
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	a, err := loadAPI(t, opts.IntegrationTimeout)
	if err != nil {
		return nil, err
	}
	return &Front{api: a, inv: inv, allows: policyAllows, opts: opts, region: t.Region, account: t.Account, partition: t.Partition}, nil
}

// Stage is the stage's name, the URL's first path segment.
func (f *Front) Stage() string { return f.api.stage }

// ServeHTTP answers one request: the size limit, the route, the
// authorizer, then the integration.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := uuid.NewString()
	w.Header().Set("X-Amzn-Requestid", requestID)
	body, ok := readBody(r)
	if !ok {
		// Refused before any gateway response applies, as plain text.
		w.Header().Set("Content-Type", "text; charset=utf-8")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprintf(w, "HTTP content length exceeded %d bytes.", maxRequestBytes)
		return
	}
	resp, fail := f.handle(r, body, requestID)
	if fail != nil {
		f.writeFailure(w, *fail, requestID)
		return
	}
	f.writeResponse(w, r, resp)
}

func (f *Front) handle(r *http.Request, body []byte, requestID string) (proxyResponse, *failure) {
	if f.api.limiter != nil && !f.api.limiter.AllowN(f.opts.Now(), 1) {
		return proxyResponse{}, ptr(throttled())
	}
	path, route, m, ok := f.route(r)
	if !ok {
		return proxyResponse{}, ptr(missingAuthToken())
	}
	q := request{r: r, path: path, body: body, route: route, requestID: requestID, now: f.opts.Now()}
	arn := f.methodArn(r.Method, path)
	if m.authorizer != nil {
		auth, fail := f.authorize(r.Context(), m.authorizer, r.Header, arn)
		if fail != nil {
			return proxyResponse{}, fail
		}
		q.auth = auth
	}
	return f.integrate(r.Context(), m, q, arn)
}

// route is the request's path after the stage, its resource and method;
// a path outside the stage, or without a resource and method, is no
// route (API Gateway's "Missing Authentication Token").
func (f *Front) route(r *http.Request) (string, match, *method, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+f.api.stage)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", match{}, nil, false
	}
	if rest == "" {
		rest = "/"
	}
	route, ok := f.api.root.resolve(rest)
	if !ok {
		return "", match{}, nil, false
	}
	m, ok := route.res.methodFor(r.Method)
	return rest, route, m, ok
}

// methodArn is the execute-api ARN of a request, which the authorizer gets
// and its policy is checked against:
// arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path without its leading slash>.
func (f *Front) methodArn(verb, path string) string {
	return fmt.Sprintf("arn:%s:execute-api:%s:%s:%s/%s/%s/%s", f.partition, f.region, f.account, f.api.id, f.api.stage, verb, strings.TrimPrefix(path, "/"))
}

func (f *Front) serviceMayInvoke(sourceArn, functionArn string) error {
	if f.opts.ServiceMayInvoke == nil {
		return nil
	}
	ok, err := f.opts.ServiceMayInvoke(apiGatewayPrincipal, sourceArn, functionArn)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s may not invoke %s from %s", apiGatewayPrincipal, functionArn, sourceArn)
	}
	return nil
}

// readBody reads the request's body up to API Gateway's 10 MB; false
// when it is larger.
func readBody(r *http.Request) ([]byte, bool) {
	if r.ContentLength > maxRequestBytes {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil || len(b) > maxRequestBytes {
		return nil, false
	}
	return b, true
}

func (f *Front) writeFailure(w http.ResponseWriter, fail failure, requestID string) {
	if fail.cause != nil {
		f.opts.Log.Warn("apigw: gateway response", "type", fail.typ, "request", requestID, "cause", fail.cause.Error())
	}
	status, h, body := f.api.responses.render(fail, requestID)
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (f *Front) writeResponse(w http.ResponseWriter, r *http.Request, p proxyResponse) {
	body, err := f.api.decodeBody(p, r.Header.Get("Accept"))
	if err != nil {
		f.writeFailure(w, integrationFailure(err), w.Header().Get("X-Amzn-Requestid"))
		return
	}
	for k, vs := range p.header {
		w.Header()[k] = vs
	}
	body = f.api.compress(body, r.Header.Get("Accept-Encoding"), w.Header())
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.status)
	_, _ = w.Write(body)
}

func ptr[T any](v T) *T { return &v }
