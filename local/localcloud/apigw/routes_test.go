package apigw

import (
	"reflect"
	"testing"
)

// The most specific resource wins: a literal before a {param} before a
// greedy {proxy+}; a resource without the method, or a path outside the
// stage, is API Gateway's 403 "Missing Authentication Token".
func TestServe_Routes(t *testing.T) {
	missing := `{"message":"Missing Authentication Token"}`
	cases := []struct {
		method, target string
		resource       string            // the event's resource; "" when no route
		params         map[string]string // the event's pathParameters
	}{
		{method: "GET", target: "/dev", resource: "/"},
		{method: "GET", target: "/dev/", resource: "/"},
		{method: "GET", target: "/dev/ui", resource: "/ui"},
		{method: "GET", target: "/dev/ui/", resource: "/ui"}, // a trailing slash is ignored
		{method: "GET", target: "/dev/ui/app/main.js", resource: "/ui/{proxy+}", params: map[string]string{"proxy": "app/main.js"}}, // greedy takes the rest
		{method: "POST", target: "/dev/ui", resource: ""},                                                        // /ui has GET only; no fallback to /{proxy+}
		{method: "GET", target: "/dev/items/special", resource: "/items/special"},                                // literal before {id}
		{method: "DELETE", target: "/dev/items/special", resource: ""},                                           // the literal has GET only
		{method: "PUT", target: "/dev/items/42", resource: "/items/{id}", params: map[string]string{"id": "42"}}, // ANY
		{method: "GET", target: "/dev/items/42/parts", resource: "/{proxy+}", params: map[string]string{"proxy": "items/42/parts"}},
		{method: "GET", target: "/dev/api/v1/rollouts", resource: "/{proxy+}", params: map[string]string{"proxy": "api/v1/rollouts"}},
		{method: "GET", target: "/prod/ui", resource: ""}, // another stage
		{method: "GET", target: "/devx/ui", resource: ""}, // not the stage segment
		{method: "GET", target: "/", resource: ""},        // no stage at all
		{method: "GET", target: "/dev//ui", resource: ""}, // an empty segment
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			h := newHarness(t, Options{}, nil)
			w := h.authed(c.method, c.target, "")
			if c.resource == "" {
				expectResponse(t, w, 403, missing)
				if n := h.lambda.count(apiFn) + h.lambda.count(authFn); n != 0 {
					t.Errorf("%d invocations for no route", n)
				}
				return
			}
			expectResponse(t, w, 200, "ok")
			evs := h.lambda.events(t)
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			if evs[0].Resource != c.resource || evs[0].RequestContext.ResourcePath != c.resource || !reflect.DeepEqual(evs[0].PathParameters, c.params) {
				t.Errorf("resource %s %s params %v, want %s %v", evs[0].Resource, evs[0].RequestContext.ResourcePath, evs[0].PathParameters, c.resource, c.params)
			}
		})
	}
}

// A resource's requestContext.resourceId is its Ref; the root's is the
// API's RootResourceId.
func TestServe_ResourceIDs(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	tpl := loadTemplate(t, nil)
	root, _ := tpl.GetAtt("Api", "RootResourceId")
	h.authed("GET", "/dev", "")
	h.do("GET", "/dev/ui", "")
	evs := h.lambda.events(t)
	if got := evs[0].RequestContext.ResourceID; got != root {
		t.Errorf("root resourceId %s, want %s", got, root)
	}
	if got := evs[1].RequestContext.ResourceID; got != tpl.Physical("Ui") {
		t.Errorf("/ui resourceId %s, want %s", got, tpl.Physical("Ui"))
	}
}
