package apigw

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// A body over API Gateway's 10 MB is refused before anything else, in
// plain text that no gateway response changes.
func TestLimits_RequestOver10MB(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	w := h.do("POST", "/dev/items/1", strings.Repeat("a", 10<<20+1))
	expectResponse(t, w, 413, "HTTP content length exceeded 10485760 bytes.")
	if h.lambda.count(apiFn) != 0 {
		t.Error("invoked")
	}
}

// An event over Lambda's 6 MB synchronous request (a 5.9 MiB body fits
// API Gateway, not the event once escaped) is API Gateway's 413 "Request
// Too Long", without invoking; so is Lambda's own refusal, in either form
// an Invoker may report it.
func TestLimits_LambdaRequestTooLarge(t *testing.T) {
	const body = `{"message":"Request Too Long"}`
	h := newHarness(t, Options{}, nil)
	w := h.do("POST", "/dev/items/1", strings.Repeat(`"`, 3<<20+1)) // 3 MiB of quotes: over 6 MiB escaped
	expectResponse(t, w, 413, body)
	if h.lambda.count(apiFn) != 0 || w.Header().Get("X-Amzn-Errortype") != "BadRequestException" {
		t.Errorf("invoked %d times; headers %v", h.lambda.count(apiFn), w.Header())
	}
	w = h.do("POST", "/dev/items/1", strings.Repeat(`a`, 6<<20-4<<10)) // fits the event: reaches the function
	expectResponse(t, w, 200, "ok")

	for name, err := range map[string]error{
		"ErrRequestTooLarge":             fmt.Errorf("invoke: %w", ErrRequestTooLarge),
		"RequestTooLargeException (SDK)": fmt.Errorf("operation error Lambda: Invoke: %w", &lambdatypes.RequestTooLargeException{}),
	} {
		t.Run(name, func(t *testing.T) {
			h.on(apiFn, func(context.Context, []byte) (Result, error) { return Result{}, err })
			expectResponse(t, h.do("GET", "/dev/ui", ""), 413, body)
		})
	}
}

// A function slower than the integration timeout is a 504 "Endpoint
// request timed out", whether or not the Invoker honours the context.
func TestLimits_IntegrationTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	handlers := map[string]func(context.Context, []byte) (Result, error){
		"honours the context": func(ctx context.Context, _ []byte) (Result, error) {
			<-ctx.Done()
			return Result{}, ctx.Err()
		},
		"ignores the context": func(context.Context, []byte) (Result, error) {
			<-release
			return Result{}, nil
		},
	}
	for name, fn := range handlers {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{IntegrationTimeout: 20 * time.Millisecond}, nil)
			h.on(apiFn, fn)
			done := make(chan *httptest.ResponseRecorder, 1)
			go func() { done <- h.do("GET", "/dev/ui", "") }()
			select {
			case w := <-done:
				expectResponse(t, w, 504, `{"message":"Endpoint request timed out"}`)
			case <-time.After(5 * time.Second):
				t.Fatal("no answer 5 s after a 20 ms timeout")
			}
		})
	}
}

// The default integration timeout is API Gateway's 29 s, and a method's
// TimeoutInMillis takes its place.
func TestLimits_TimeoutSettings(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	if got := h.front.api.root.methods["ANY"].timeout; got != 29*time.Second {
		t.Errorf("default timeout %v", got)
	}
	h = newHarness(t, Options{}, func(res map[string]any) {
		props(res, "UiGet")["Integration"].(map[string]any)["TimeoutInMillis"] = 1500
	})
	ui, _ := h.front.api.root.resolve("/ui")
	if got := ui.res.methods["GET"].timeout; got != 1500*time.Millisecond {
		t.Errorf("TimeoutInMillis gave %v", got)
	}
}

// A function whose resource policy does not let API Gateway invoke it
// from the method's ARN is a 500 without a call.
func TestIntegration_NeedsThePermission(t *testing.T) {
	var asked []string
	h := newHarness(t, Options{ServiceMayInvoke: func(principal, source, fn string) (bool, error) {
		asked = append(asked, source)
		return fn != apiFn, nil
	}}, nil)
	expectResponse(t, h.do("GET", "/dev/ui/a.js", ""), 500, `{"message":"Internal server error"}`)
	want := "arn:aws:execute-api:eu-west-1:111122223333:" + h.front.api.id + "/dev/GET/ui/a.js"
	if len(asked) != 1 || asked[0] != want || h.lambda.count(apiFn) != 0 {
		t.Errorf("asked %v (want %s), %d calls", asked, want, h.lambda.count(apiFn))
	}
}

// The stage's throttling is a token bucket of its rate and burst: past the
// burst a request is THROTTLED (the template's 429 override), and the rate
// refills it.
func TestLimits_StageThrottling(t *testing.T) {
	h := newHarness(t, Options{}, func(res map[string]any) {
		props(res, "Stage")["MethodSettings"] = []any{map[string]any{"HttpMethod": "*", "ResourcePath": "/*", "ThrottlingBurstLimit": 2, "ThrottlingRateLimit": 1}}
	})
	for i := range 2 {
		if w := h.do("GET", "/dev/items/1", ""); w.Code != 200 {
			t.Fatalf("request %d within the burst: %d", i+1, w.Code)
		}
	}
	w := h.do("GET", "/dev/items/1", "")
	if w.Code != 429 || w.Header().Get("X-Amzn-Errortype") != "TooManyRequestsException" {
		t.Fatalf("past the burst: %d %q, want 429 TooManyRequestsException", w.Code, w.Header().Get("X-Amzn-Errortype"))
	}
	if h.lambda.count(apiFn) != 2 {
		t.Errorf("the throttled request reached the function")
	}
	h.clock.advance(time.Second)
	if w := h.do("GET", "/dev/items/1", ""); w.Code != 200 {
		t.Errorf("a second later (rate 1/s): %d", w.Code)
	}
}

// Throttling of one method alone is refused, not silently widened.
func TestLimits_MethodThrottlingRefused(t *testing.T) {
	change := func(res map[string]any) {
		props(res, "Stage")["MethodSettings"] = []any{map[string]any{"HttpMethod": "GET", "ResourcePath": "/~1items", "ThrottlingRateLimit": 5}}
	}
	if _, err := New(loadTemplate(t, change), &fakeLambda{}, simplePolicyAllows, Options{}); err == nil || !strings.Contains(err.Error(), "not emulated") {
		t.Errorf("err = %v, want the method's throttling refused", err)
	}
}
