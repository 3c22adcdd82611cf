package apigw

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

// The function's statusCode, headers (both forms merged) and body reach
// the client.
func TestResponse_Mapped(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.on(apiFn, raw(`{"statusCode": 201, "headers": {"X-One": "a", "X-Both": "m1"},
		"multiValueHeaders": {"X-Both": ["m1", "m2"], "Set-Cookie": ["a=1", "b=2"]}, "body": "{\"id\":1}"}`))
	w := h.do("GET", "/dev/ui", "")
	expectResponse(t, w, 201, `{"id":1}`)
	want := map[string][]string{"X-One": {"a"}, "X-Both": {"m1", "m2"}, "Set-Cookie": {"a=1", "b=2"}}
	for k, vs := range want {
		if got := w.Header().Values(k); !reflect.DeepEqual(got, vs) {
			t.Errorf("%s = %v, want %v", k, got, vs)
		}
	}
}

// What is not a proxy response is a 502 {"message": "Internal server
// error"}, as is a function's error; the template's DEFAULT_5XX adds its
// header.
func TestResponse_InvalidIs502(t *testing.T) {
	cases := map[string]func(context.Context, []byte) (Result, error){
		"not JSON":              raw(`hello`),
		"a JSON string":         raw(`"hello"`),
		"null":                  raw(`null`),
		"no statusCode":         raw(`{"body": "x"}`),
		"statusCode not a code": raw(`{"statusCode": 20}`),
		"fractional status":     raw(`{"statusCode": 200.5}`),
		"unknown key":           raw(`{"statusCode": 200, "message": "x"}`),
		"body not a string":     raw(`{"statusCode": 200, "body": {"a": 1}}`),
		"header not a string":   raw(`{"statusCode": 200, "headers": {"X": 1}}`),
		"multi not a list":      raw(`{"statusCode": 200, "multiValueHeaders": {"X": "a"}}`),
		"function error": func(context.Context, []byte) (Result, error) {
			return Result{FunctionError: "Unhandled", Payload: []byte(`{"errorMessage":"panic"}`)}, nil
		},
		"invoke error": func(context.Context, []byte) (Result, error) { return Result{}, io.ErrUnexpectedEOF },
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, nil)
			h.on(apiFn, fn)
			w := h.do("GET", "/dev/ui", "")
			expectResponse(t, w, 502, `{"message":"Internal server error"}`)
			if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", w.Header())
			}
		})
	}
	valid := map[string]string{
		"status as a string": `{"statusCode": "204"}`,
		"null body":          `{"statusCode": 200, "body": null}`,
	}
	for name, payload := range valid {
		h := newHarness(t, Options{}, nil)
		h.on(apiFn, raw(payload))
		if w := h.do("GET", "/dev/ui", ""); w.Code >= 500 {
			t.Errorf("%s: %d", name, w.Code)
		}
	}
}

// A base64 body is decoded when the request's first Accept type is a
// binary media type; otherwise the client gets the base64 text.
func TestResponse_Base64Body(t *testing.T) {
	cases := []struct {
		accept string
		body   string
	}{
		{accept: "image/png", body: "PNG!"},
		{accept: "image/png, text/html", body: "PNG!"},
		{accept: "text/html, image/png", body: "UE5HIQ=="}, // only the first type counts
		{accept: "", body: "UE5HIQ=="},
	}
	for _, c := range cases {
		h := newHarness(t, Options{}, nil)
		h.on(apiFn, raw(`{"statusCode": 200, "body": "UE5HIQ==", "isBase64Encoded": true}`))
		expectResponse(t, h.do("GET", "/dev/ui", "", "Accept", c.accept), 200, c.body)
	}
}

// With MinimumCompressionSize (1000 here), a body of at least that size is
// gzipped for a client that accepts gzip.
func TestResponse_Compression(t *testing.T) {
	big := strings.Repeat("a", 1000)
	cases := []struct {
		body, acceptEncoding string
		gzipped              bool
	}{
		{body: big, acceptEncoding: "gzip, br", gzipped: true},
		{body: big[:999], acceptEncoding: "gzip", gzipped: false},
		{body: big, acceptEncoding: "", gzipped: false},
		{body: big, acceptEncoding: "gzip;q=0", gzipped: false},
	}
	for _, c := range cases {
		h := newHarness(t, Options{}, nil)
		h.on(apiFn, ok(map[string]any{"statusCode": 200, "body": c.body}))
		w := h.do("GET", "/dev/ui", "", "Accept-Encoding", c.acceptEncoding)
		got := w.Body.Bytes()
		if gz := w.Header().Get("Content-Encoding") == "gzip"; gz != c.gzipped {
			t.Fatalf("%d bytes, Accept-Encoding %q: gzipped %v", len(c.body), c.acceptEncoding, gz)
		}
		if c.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			got, _ = io.ReadAll(zr)
		}
		if string(got) != c.body {
			t.Errorf("body of %d bytes, want %d", len(got), len(c.body))
		}
	}
	h := newHarness(t, Options{}, func(res map[string]any) { delete(props(res, "Api"), "MinimumCompressionSize") })
	h.on(apiFn, ok(map[string]any{"statusCode": 200, "body": big}))
	if w := h.do("GET", "/dev/ui", "", "Accept-Encoding", "gzip"); w.Header().Get("Content-Encoding") != "" {
		t.Error("compressed without MinimumCompressionSize")
	}
}
