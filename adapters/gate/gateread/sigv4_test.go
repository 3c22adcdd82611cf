package gateread

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// A query to Amazon Managed Service for Prometheus goes out signed for the
// service "aps" in the workspace's region, with its body intact.
func TestSigV4RoundTripper(t *testing.T) {
	type seen struct {
		path, auth, date, token string
		form                    url.Values
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		got <- seen{path: r.URL.Path, auth: r.Header.Get("Authorization"), date: r.Header.Get("X-Amz-Date"),
			token: r.Header.Get("X-Amz-Security-Token"), form: form}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1796122800,"0.5"]}]}}`)
	}))
	defer srv.Close()

	rt := SigV4RoundTripper{
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "session-token"),
		Region:      "eu-west-1",
		Now:         fixedNow,
	}
	api, err := NewPrometheus(srv.URL+"/workspaces/ws-1234", rt)
	if err != nil {
		t.Fatal(err)
	}
	h := policy.Health{Metrics: []policy.Metric{{Name: "errors", Query: `up{fleet="{fleet}"}`, Max: ptr(1)}}}
	rs := Reader{Prometheus: api, Now: fixedNow}.Read(context.Background(), h, gate.Request{Fleet: "edge", Passes: []gate.Pass{euPass}})
	if len(rs) != 1 || rs[0].Red || rs[0].Detail != "value 0.5 within max 1" {
		t.Fatalf("results %+v, want the signed query's answer", rs)
	}
	s := <-got
	if s.path != "/workspaces/ws-1234/api/v1/query" {
		t.Errorf("path %s", s.path)
	}
	const scope = "AWS4-HMAC-SHA256 Credential=AKIDTEST/20261201/eu-west-1/aps/aws4_request, SignedHeaders="
	if !strings.HasPrefix(s.auth, scope) || !strings.Contains(s.auth, "Signature=") {
		t.Errorf("Authorization %q, want %q…", s.auth, scope)
	}
	if s.date != "20261201T110000Z" || s.token != "session-token" {
		t.Errorf("X-Amz-Date %q, X-Amz-Security-Token %q", s.date, s.token)
	}
	if s.form.Get("query") != `up{fleet="edge"}` {
		t.Errorf("body %v: the signed body did not arrive", s.form)
	}
}

func TestSigV4RoundTripper_LeavesTheRequestAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("query=up"))
	rt := SigV4RoundTripper{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""), Region: "eu-west-1", Now: fixedNow}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.Header.Get("Authorization") != "" || req.Header.Get("X-Amz-Date") != "" {
		t.Errorf("the caller's request was signed: %v", req.Header)
	}
}

func TestSigV4RoundTripper_Unset(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := (SigV4RoundTripper{Region: "eu-west-1"}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "must be set") {
		t.Errorf("error %v, want one naming the unset fields", err)
	}
}
