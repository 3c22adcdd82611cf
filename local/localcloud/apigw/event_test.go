package apigw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The proxy event of a request, against testdata/proxy-event.json (the
// request id, random per request, is the response's X-Amzn-RequestId).
func TestEvent_Golden(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	w := h.authed("POST", "http://api.local:8080/dev/items/42?tag=a&tag=b&q=x%20y", `{"name":"x"}`,
		"Content-Type", "application/json", "User-Agent", "myrctl/1", "X-Multi", "1", "X-Multi", "2")
	expectResponse(t, w, 200, "ok")
	got := h.lambda.events(t)[0]

	golden, err := os.ReadFile("testdata/proxy-event.json")
	if err != nil {
		t.Fatal(err)
	}
	id := w.Header().Get("X-Amzn-Requestid")
	golden = bytes.ReplaceAll(golden, []byte("${requestId}"), []byte(id))
	golden = bytes.ReplaceAll(golden, []byte("${apiId}"), []byte(h.front.api.id))
	golden = bytes.ReplaceAll(golden, []byte("${resourceId}"), []byte(loadTemplate(t, nil).Physical("Item")))
	var want events.APIGatewayProxyRequest
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("event:\n%s\nwant testdata/proxy-event.json", g)
	}
}

// Without a query string, both query maps are null (not {}), and a
// request without body has an empty one.
func TestEvent_NullsWhenAbsent(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.do("GET", "/dev/ui", "")
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(h.lambda.calls[apiFn][0], &ev); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"queryStringParameters", "multiValueQueryStringParameters", "pathParameters"} {
		if string(ev[k]) != "null" {
			t.Errorf("%s = %s, want null", k, ev[k])
		}
	}
	if string(ev["body"]) != `""` {
		t.Errorf("body = %s", ev["body"])
	}
}

// A body whose Content-Type is one of BinaryMediaTypes (wildcards and the
// "~1" escape included) reaches the function base64-encoded.
func TestEvent_BinaryBody(t *testing.T) {
	body := "PNG\x00é" // valid UTF-8, which a text body must be
	cases := []struct {
		contentType string
		binary      bool
	}{
		{contentType: "image/png", binary: true},
		{contentType: "application/octet-stream", binary: true}, // "application~1octet-stream" in the template
		{contentType: "image/PNG; q=1", binary: true},
		{contentType: "text/plain", binary: false},
		{contentType: "", binary: false},
	}
	for _, c := range cases {
		t.Run(c.contentType, func(t *testing.T) {
			h := newHarness(t, Options{}, nil)
			h.do("GET", "/dev/items/1", body, "Content-Type", c.contentType)
			ev := h.lambda.events(t)[0]
			want := body
			if c.binary {
				want = base64.StdEncoding.EncodeToString([]byte(body))
			}
			if ev.IsBase64Encoded != c.binary || ev.Body != want {
				t.Errorf("body %q base64 %v, want %q %v", ev.Body, ev.IsBase64Encoded, want, c.binary)
			}
		})
	}
	h := newHarness(t, Options{}, func(res map[string]any) { props(res, "Api")["BinaryMediaTypes"] = []any{"image/*"} })
	h.do("GET", "/dev/items/1", body, "Content-Type", "image/jpeg")
	if !h.lambda.events(t)[0].IsBase64Encoded {
		t.Error("image/* does not cover image/jpeg")
	}
}

// Stage variables come from the stage; null when it has none.
func TestEvent_StageVariables(t *testing.T) {
	h := newHarness(t, Options{}, func(res map[string]any) { delete(props(res, "Stage"), "Variables") })
	h.do("GET", "/dev/ui", "")
	if !strings.Contains(string(h.lambda.calls[apiFn][0]), `"stageVariables":null`) {
		t.Errorf("stageVariables not null: %s", h.lambda.calls[apiFn][0])
	}
}
