package apigw

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

const (
	testRegion  = "eu-west-1"
	testAccount = "111122223333"
	apiFn       = "arn:aws:lambda:eu-west-1:111122223333:function:Api-test-Fnapi"
	authFn      = "arn:aws:lambda:eu-west-1:111122223333:function:Api-test-Fnauth"
	goodToken   = "Bearer abc.def"
)

// loadTemplate parses testdata/Api-test.template.json, edited by change
// first when it is not nil.
func loadTemplate(t *testing.T, change func(res map[string]any)) *cfn.Template {
	t.Helper()
	raw, err := os.ReadFile("testdata/Api-test.template.json")
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		change(doc["Resources"].(map[string]any))
		raw, _ = json.Marshal(doc)
	}
	tpl, err := cfn.Parse(raw, "testdata", "Api-test", cfn.Options{Region: testRegion, Account: testAccount})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// props is a resource's Properties in a raw template being edited.
func props(res map[string]any, id string) map[string]any {
	return res[id].(map[string]any)["Properties"].(map[string]any)
}

// fakeLambda answers invocations per function and records their payloads.
type fakeLambda struct {
	mu    sync.Mutex
	calls map[string][][]byte
	fns   map[string]func(ctx context.Context, payload []byte) (Result, error)
}

func (l *fakeLambda) Invoke(ctx context.Context, fn string, payload []byte) (Result, error) {
	l.mu.Lock()
	l.calls[fn] = append(l.calls[fn], payload)
	h := l.fns[fn]
	l.mu.Unlock()
	return h(ctx, payload)
}

func (l *fakeLambda) count(fn string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls[fn])
}

// events are the proxy events the api function got.
func (l *fakeLambda) events(t *testing.T) []events.APIGatewayProxyRequest {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []events.APIGatewayProxyRequest
	for _, p := range l.calls[apiFn] {
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(p, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func ok(payload any) func(context.Context, []byte) (Result, error) {
	b, _ := json.Marshal(payload)
	return func(context.Context, []byte) (Result, error) { return Result{Payload: b}, nil }
}

func raw(s string) func(context.Context, []byte) (Result, error) {
	return func(context.Context, []byte) (Result, error) { return Result{Payload: []byte(s)}, nil }
}

// allowAll is an authorizer that allows the whole API to principal "alice".
func allowAll() func(context.Context, []byte) (Result, error) {
	return ok(map[string]any{"principalId": "alice", "policyDocument": policy("Allow", "arn:aws:execute-api:eu-west-1:111122223333:*/dev/*"),
		"context": map[string]any{"role": "admin", "level": 3, "ok": true}})
}

func policy(effect, resource string) map[string]any {
	return map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": effect, "Action": "execute-api:Invoke", "Resource": resource}}}
}

// simplePolicyAllows evaluates the one-statement policies of these tests:
// Allow and a resource that equals the ARN or is a prefix ending in "*".
// (The IAM evaluator is the lead's; this only stands in for it.)
func simplePolicyAllows(_ context.Context, doc json.RawMessage, action, resource string) (bool, error) {
	var p struct {
		Statement []struct{ Effect, Action, Resource string }
	}
	if err := json.Unmarshal(doc, &p); err != nil {
		return false, err
	}
	allowed := false
	for _, s := range p.Statement {
		match := s.Resource == resource || (strings.HasSuffix(s.Resource, "*") && matchStar(s.Resource, resource))
		if !match || s.Action != action {
			continue
		}
		if s.Effect == "Deny" {
			return false, nil
		}
		allowed = true
	}
	return allowed, nil
}

// matchStar matches a pattern whose only wildcards are "*".
func matchStar(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1:] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness is a front over the test template with a fake Lambda whose api
// function echoes 200 "ok" and whose authorizer allows everything.
type harness struct {
	front  *Front
	lambda *fakeLambda
	clock  *clock
}

func newHarness(t *testing.T, opts Options, change func(map[string]any)) *harness {
	t.Helper()
	h := &harness{
		lambda: &fakeLambda{calls: map[string][][]byte{}, fns: map[string]func(context.Context, []byte) (Result, error){
			apiFn:  ok(map[string]any{"statusCode": 200, "body": "ok"}),
			authFn: allowAll(),
		}},
		clock: &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
	}
	opts.Now = h.clock.Now
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	f, err := New(loadTemplate(t, change), h.lambda, simplePolicyAllows, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.front = f
	return h
}

func (h *harness) on(fn string, handler func(context.Context, []byte) (Result, error)) {
	h.lambda.mu.Lock()
	h.lambda.fns[fn] = handler
	h.lambda.mu.Unlock()
}

// do serves one request; header pairs are name, value, name, value...
func (h *harness) do(method, target, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.front.ServeHTTP(w, r)
	return w
}

func (h *harness) authed(method, target, body string, header ...string) *httptest.ResponseRecorder {
	return h.do(method, target, body, append([]string{"Authorization", goodToken}, header...)...)
}

func expectResponse(t *testing.T, w *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if w.Code != status || w.Body.String() != body {
		t.Errorf("got %d %s, want %d %s", w.Code, w.Body.String(), status, body)
	}
}

var _ http.Handler = (*Front)(nil)
