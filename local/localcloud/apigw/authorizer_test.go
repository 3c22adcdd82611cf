package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// expectUnauthorized checks the template's UNAUTHORIZED gateway response:
// its status, headers and body in place of {"message":"Unauthorized"}.
func expectUnauthorized(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	want := fmt.Sprintf(`{"status":401,"code":"unauthenticated","request":"%s"}`, w.Header().Get("X-Amzn-Requestid"))
	expectResponse(t, w, 401, want)
	if ct, wa := w.Header().Get("Content-Type"), w.Header().Get("WWW-Authenticate"); ct != "application/problem+json" || wa != `Bearer realm="test"` {
		t.Errorf("Content-Type %q, WWW-Authenticate %q", ct, wa)
	}
}

// The authorizer is not called when the identity header is missing or
// does not match IdentityValidationExpression (the whole token); both are
// the template's UNAUTHORIZED response.
func TestAuthorizer_TokenCheckedBeforeTheCall(t *testing.T) {
	cases := map[string][]string{
		"no header":              nil,
		"empty header":           {"Authorization", ""},
		"not Bearer":             {"Authorization", "Basic abc"},
		"bad character":          {"Authorization", "Bearer abc def"},
		"match is not the whole": {"Authorization", "xBearer abc"},
	}
	for name, header := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, nil)
			expectUnauthorized(t, h.do("GET", "/dev/api/v1/rollouts", "", header...))
			if n := h.lambda.count(authFn) + h.lambda.count(apiFn); n != 0 {
				t.Errorf("%d invocations", n)
			}
		})
	}
}

// IdentityValidationExpression must match the whole token, anchored or
// not (Java's Pattern.matches).
func TestAuthorizer_ValidationMatchesTheWholeToken(t *testing.T) {
	h := newHarness(t, Options{}, func(res map[string]any) { props(res, "Auth")["IdentityValidationExpression"] = "Bearer [a-z.]+" })
	expectUnauthorized(t, h.do("GET", "/dev/a", "", "Authorization", "Bearer abc.def trailing"))
	expectUnauthorized(t, h.do("GET", "/dev/a", "", "Authorization", "xBearer abc"))
	expectResponse(t, h.authed("GET", "/dev/a", ""), 200, "ok")
}

// The authorizer gets the TOKEN event with the request's method ARN.
func TestAuthorizer_Event(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.authed("DELETE", "/dev/api/v1/rollouts/r1", "")
	var ev events.APIGatewayCustomAuthorizerRequest
	if err := json.Unmarshal(h.lambda.calls[authFn][0], &ev); err != nil {
		t.Fatal(err)
	}
	want := events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: goodToken,
		MethodArn: "arn:aws:execute-api:eu-west-1:111122223333:" + h.front.api.id + "/dev/DELETE/api/v1/rollouts/r1"}
	if ev != want {
		t.Errorf("authorizer event %+v, want %+v", ev, want)
	}
}

// What the authorizer answers decides: "Unauthorized" is a 401, another
// error or a malformed answer a 500 {"message":null} (the template's
// DEFAULT_5XX adds its header), a Deny a 403; only an Allow reaches the
// function.
func TestAuthorizer_Outcomes(t *testing.T) {
	failWith := func(msg string) func(context.Context, []byte) (Result, error) {
		return func(context.Context, []byte) (Result, error) {
			return Result{FunctionError: "Unhandled", Payload: []byte(`{"errorMessage":"` + msg + `","errorType":"errorString"}`)}, nil
		}
	}
	cases := []struct {
		name   string
		auth   func(context.Context, []byte) (Result, error)
		status int
		body   string
	}{
		{name: "allow", auth: allowAll(), status: 200, body: "ok"},
		{name: "Unauthorized error", auth: failWith("Unauthorized"), status: 401},
		{name: "other error", auth: failWith("boom"), status: 500, body: `{"message":null}`},
		{name: "invoke error", auth: func(context.Context, []byte) (Result, error) { return Result{}, errors.New("connection refused") }, status: 500, body: `{"message":null}`},
		{name: "not JSON", auth: raw(`nope`), status: 500, body: `{"message":null}`},
		{name: "no principalId", auth: ok(map[string]any{"policyDocument": policy("Allow", "*")}), status: 500, body: `{"message":null}`},
		{name: "no policyDocument", auth: ok(map[string]any{"principalId": "a"}), status: 500, body: `{"message":null}`},
		{name: "object in context", auth: ok(map[string]any{"principalId": "a", "policyDocument": policy("Allow", "*"), "context": map[string]any{"x": map[string]any{}}}), status: 500, body: `{"message":null}`},
		{name: "deny", auth: ok(map[string]any{"principalId": "a", "policyDocument": policy("Deny", "*")}), status: 403, body: `{"Message":"User is not authorized to access this resource"}`},
		{name: "allow of another method", auth: ok(map[string]any{"principalId": "a", "policyDocument": policy("Allow", "arn:aws:execute-api:eu-west-1:111122223333:*/dev/POST/*")}), status: 403, body: `{"Message":"User is not authorized to access this resource"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{}, nil)
			h.on(authFn, c.auth)
			w := h.authed("GET", "/dev/api/v1/rollouts", "")
			if c.status == 401 {
				expectUnauthorized(t, w)
			} else {
				expectResponse(t, w, c.status, c.body)
			}
			if c.status == 500 && w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("DEFAULT_5XX's header is missing: %v", w.Header())
			}
			if reached := h.lambda.count(apiFn) == 1; reached != (c.status == 200) {
				t.Errorf("function reached: %v", reached)
			}
		})
	}
}

// The event's requestContext.authorizer holds the principal, the
// authorizer's latency and its context values as strings.
func TestAuthorizer_ContextInTheEvent(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.on(authFn, func(context.Context, []byte) (Result, error) {
		h.clock.advance(15 * time.Millisecond) // the authorizer takes 15 ms
		return allowAll()(context.Background(), nil)
	})
	h.authed("GET", "/dev/api/v1/rollouts", "")
	got := h.lambda.events(t)[0].RequestContext.Authorizer
	want := map[string]any{"principalId": "alice", "integrationLatency": float64(15), "role": "admin", "level": "3", "ok": "true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("authorizer %v, want %v", got, want)
	}
	h.do("GET", "/dev/ui", "")
	if got := h.lambda.events(t)[1].RequestContext.Authorizer; got != nil {
		t.Errorf("a method without authorizer has authorizer %v", got)
	}
}

// Answers are cached per token for AuthorizerResultTtlInSeconds (60 s
// here); a cached policy is checked again against each request's method
// ARN, so a policy for one path denies another without a call.
func TestAuthorizer_Cache(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.on(authFn, func(_ context.Context, payload []byte) (Result, error) {
		var ev events.APIGatewayCustomAuthorizerRequest
		_ = json.Unmarshal(payload, &ev)
		return ok(map[string]any{"principalId": "a", "policyDocument": policy("Allow", ev.MethodArn)})(context.Background(), nil)
	})
	steps := []struct {
		after  time.Duration
		token  string
		path   string
		status int
		calls  int // authorizer invocations so far
	}{
		{token: goodToken, path: "/dev/a", status: 200, calls: 1},
		{after: 59 * time.Second, token: goodToken, path: "/dev/a", status: 200, calls: 1}, // cached
		{token: goodToken, path: "/dev/b", status: 403, calls: 1},                          // the cached policy names /a only
		{token: "Bearer other", path: "/dev/b", status: 200, calls: 2},                     // another token, another entry
		{after: 1 * time.Second, token: goodToken, path: "/dev/b", status: 200, calls: 3},  // 60 s on: expired, called again
	}
	for i, s := range steps {
		h.clock.advance(s.after)
		w := h.do("GET", s.path, "", "Authorization", s.token)
		if w.Code != s.status || h.lambda.count(authFn) != s.calls {
			t.Errorf("step %d: %d with %d calls, want %d with %d", i, w.Code, h.lambda.count(authFn), s.status, s.calls)
		}
	}
}

// A TTL of 0 turns the cache off.
func TestAuthorizer_TTLZeroCallsEveryTime(t *testing.T) {
	h := newHarness(t, Options{}, func(res map[string]any) { props(res, "Auth")["AuthorizerResultTtlInSeconds"] = 0 })
	for range 3 {
		h.authed("GET", "/dev/a", "")
	}
	if n := h.lambda.count(authFn); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
}

// A policy the evaluator cannot read is the authorizer's failure, not a
// Deny.
func TestAuthorizer_PolicyErrorIs500(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.front.allows = func(context.Context, json.RawMessage, string, string) (bool, error) {
		return false, errors.New("bad policy")
	}
	expectResponse(t, h.authed("GET", "/dev/a", ""), 500, `{"message":null}`)
}

// Without the function's permission for API Gateway from the authorizer's
// SourceArn, the call fails as a configuration error.
func TestAuthorizer_NeedsThePermission(t *testing.T) {
	var sources []string
	h := newHarness(t, Options{ServiceMayInvoke: func(principal, source, fn string) (bool, error) {
		sources = append(sources, principal+" "+source+" "+fn)
		return fn != authFn, nil
	}}, nil)
	expectResponse(t, h.authed("GET", "/dev/a", ""), 500, `{"message":null}`)
	want := "apigateway.amazonaws.com arn:aws:execute-api:eu-west-1:111122223333:" + h.front.api.id + "/authorizers/" + loadTemplate(t, nil).Physical("Auth") + " " + authFn
	if len(sources) != 1 || sources[0] != want {
		t.Errorf("permission checks %v, want [%s]", sources, want)
	}
	if h.lambda.count(authFn) != 0 {
		t.Error("the authorizer was invoked without permission")
	}
}
