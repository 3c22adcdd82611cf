package apigw

import (
	"testing"
)

// Without an override a failure has API Gateway's default body and
// x-amzn-ErrorType; a DEFAULT_4XX or DEFAULT_5XX of the template applies
// to every type of its class that has no response of its own, and a
// type's own response wins over it.
func TestGatewayResponses_Overrides(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	w := h.do("GET", "/prod", "")
	expectResponse(t, w, 403, `{"message":"Missing Authentication Token"}`)
	if w.Header().Get("X-Amzn-Errortype") != "MissingAuthenticationTokenException" || w.Header().Get("Cache-Control") != "" {
		t.Errorf("headers %v", w.Header())
	}

	h = newHarness(t, Options{}, func(res map[string]any) {
		res["Default4xx"] = map[string]any{"Type": "AWS::ApiGateway::GatewayResponse", "Properties": map[string]any{
			"ResponseType": "DEFAULT_4XX", "StatusCode": "404",
			"ResponseParameters": map[string]any{"gatewayresponse.header.X-Class": "'4xx'"},
			"ResponseTemplates":  map[string]any{"application/json": `{"error":$context.error.messageString,"type":"$context.error.responseType"}`},
		}}
	})
	w = h.do("GET", "/prod", "")
	expectResponse(t, w, 404, `{"error":"Missing Authentication Token","type":"MISSING_AUTHENTICATION_TOKEN"}`)
	if w.Header().Get("X-Class") != "4xx" {
		t.Errorf("headers %v", w.Header())
	}
	w = h.do("GET", "/dev/a", "") // UNAUTHORIZED has its own response
	expectUnauthorized(t, w)
	if w.Header().Get("X-Class") != "" {
		t.Errorf("DEFAULT_4XX's header on UNAUTHORIZED: %v", w.Header())
	}
}

// A template's message variables: messageString is JSON (null when there
// is no message), message the bare text.
func TestGatewayResponses_Expand(t *testing.T) {
	cases := []struct {
		tpl  string
		f    failure
		want string
	}{
		{tpl: defaultTemplate, f: unauthorized(), want: `{"message":"Unauthorized"}`},
		{tpl: defaultTemplate, f: authorizerError(nil), want: `{"message":null}`},
		{tpl: `$context.error.message!`, f: integrationTimeout(), want: `Endpoint request timed out!`},
		{tpl: `[$context.error.message]`, f: authorizerError(nil), want: `[]`},
		{tpl: `$context.requestId`, f: unauthorized(), want: `r-1`},
	}
	for _, c := range cases {
		if got := expand(c.tpl, c.f, "r-1"); got != c.want {
			t.Errorf("expand(%s) = %s, want %s", c.tpl, got, c.want)
		}
	}
}
