package awxtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/awx/awxtest"
)

// call makes a request of the fake and decodes its JSON answer.
func call(t *testing.T, url, method, path, token, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, _ := http.NewRequest(method, url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

func newServer(t *testing.T) (*awxtest.Server, string) {
	s := awxtest.New("tok", func() time.Time { return time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) })
	s.AddTemplate(awxtest.Template{ID: 7, Name: "upgrade", AskLimit: true, AskVariables: true})
	s.AddTemplate(awxtest.Template{ID: 8, Name: "fixed", Limit: "all_edge"})
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL
}

func TestServer_LaunchShapeAndJobDetail(t *testing.T) {
	s, url := newServer(t)
	status, out, h := call(t, url, "POST", "/api/v2/job_templates/7/launch/", "tok", `{"limit":"h1","extra_vars":{"v":"1"}}`)
	if status != 201 || out["job"] != 101.0 || out["id"] != 101.0 || out["status"] != "pending" || h.Get("Location") != "/api/v2/jobs/101/" {
		t.Fatalf("launch: %d %v %v", status, out, h)
	}
	if ig, _ := out["ignored_fields"].(map[string]any); len(ig) != 0 {
		t.Fatalf("ignored_fields %v, want none", ig)
	}
	s.SetStatus(101, awxtest.StatusFailed, "boom")
	status, out, _ = call(t, url, "GET", "/api/v2/jobs/101/", "tok", "")
	if status != 200 || out["status"] != "failed" || out["failed"] != true || out["job_explanation"] != "boom" || out["limit"] != "h1" || out["extra_vars"] != `{"v":"1"}` {
		t.Fatalf("detail: %d %v", status, out)
	}
}

// Like AWX, a field the template does not prompt for is not applied but
// listed in ignored_fields.
func TestServer_UnpromptedFieldsAreIgnored(t *testing.T) {
	s, url := newServer(t)
	status, out, _ := call(t, url, "POST", "/api/v2/job_templates/8/launch/", "tok", `{"limit":"h1","extra_vars":{"v":"1"}}`)
	ig, _ := out["ignored_fields"].(map[string]any)
	if status != 201 || ig["limit"] != "h1" || ig["extra_vars"] == nil {
		t.Fatalf("launch: %d %v", status, out)
	}
	if j, _ := s.Job(101); j.Limit != "all_edge" || len(j.ExtraVars) != 0 {
		t.Fatalf("job %+v, want the template's limit and no variables", j)
	}
}

func TestServer_Refusals(t *testing.T) {
	_, url := newServer(t)
	for _, c := range []struct {
		name, method, path, token, body string
		status                          int
		detail                          string
	}{
		{name: "no token", method: "GET", path: "/api/v2/jobs/", status: 401},
		{name: "wrong token", method: "GET", path: "/api/v2/jobs/", token: "other", status: 401},
		{name: "unknown field", method: "POST", path: "/api/v2/job_templates/7/launch/", token: "tok", body: `{"extraVars":{}}`, status: 400, detail: "extraVars"},
		{name: "extra_vars not a dictionary", method: "POST", path: "/api/v2/job_templates/7/launch/", token: "tok", body: `{"extra_vars":[1]}`, status: 400, detail: "extra_vars"},
		{name: "unknown template", method: "POST", path: "/api/v2/job_templates/9/launch/", token: "tok", body: `{}`, status: 404},
		{name: "filter on extra_vars", method: "GET", path: "/api/v2/jobs/?extra_vars__contains=x", token: "tok", status: 403},
		{name: "unknown job", method: "GET", path: "/api/v2/jobs/5/", token: "tok", status: 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, out, _ := call(t, url, c.method, c.path, c.token, c.body)
			if status != c.status {
				t.Fatalf("status %d (%v), want %d", status, out, c.status)
			}
			if c.detail != "" {
				if _, ok := out[c.detail]; !ok {
					t.Fatalf("answer %v, want an error for %s", out, c.detail)
				}
			}
		})
	}
}

func TestServer_CancelAndList(t *testing.T) {
	s, url := newServer(t)
	for _, limit := range []string{"h1", "h2", "h1"} {
		if status, _, _ := call(t, url, "POST", "/api/v2/job_templates/7/launch/", "tok", `{"limit":"`+limit+`"}`); status != 201 {
			t.Fatal(status)
		}
	}
	_, out, _ := call(t, url, "GET", "/api/v2/jobs/?job_template=7&limit=h1&order_by=-id&created__gt=2026-03-02T11:00:00Z", "tok", "")
	res, _ := out["results"].([]any)
	if out["count"] != 2.0 || len(res) != 2 || res[0].(map[string]any)["id"] != 103.0 {
		t.Fatalf("list %v, want jobs 103 and 101 of h1, newest first", out)
	}
	if _, out, _ = call(t, url, "GET", "/api/v2/jobs/?created__gt=2026-03-02T12:00:00Z", "tok", ""); out["count"] != 0.0 {
		t.Fatalf("list %v, want none created after noon", out)
	}
	if status, out, _ := call(t, url, "GET", "/api/v2/jobs/101/cancel/", "tok", ""); status != 200 || out["can_cancel"] != true {
		t.Fatalf("can_cancel: %d %v", status, out)
	}
	if status, _, _ := call(t, url, "POST", "/api/v2/jobs/101/cancel/", "tok", ""); status != 202 {
		t.Fatalf("cancel: %d, want 202", status)
	}
	if j, _ := s.Job(101); j.Status != awxtest.StatusCanceled {
		t.Fatalf("job %+v, want canceled", j)
	}
	status, out, _ := call(t, url, "POST", "/api/v2/jobs/101/cancel/", "tok", "")
	if status != 405 || !strings.Contains(out["detail"].(string), "not allowed") {
		t.Fatalf("cancel of an ended job: %d %v, want 405", status, out)
	}
}
