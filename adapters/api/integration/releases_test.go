package integration

import (
	"net/http"
	"strings"
	"testing"
)

// The release catalogue and the install plan over the real store: the
// adapter passes the store's release methods through, and the stored
// entries merge with the configured releases (0.161.0, 0.162.0).
func TestAPIOnDynamoDB_ReleaseCatalogueAndInstallPlan(t *testing.T) {
	e := newEnv(t)
	e.seedAgent("e1", map[string]string{"labels.fleet": "edge", "labels.wave": "canary"})
	if status, applied := e.do("POST", "/api/v1/revisions", "ad", revisionJSON); status != 200 {
		t.Fatalf("apply: %d %v", status, applied)
	}
	if status, r := e.do("PUT", "/api/v1/releases/otelcol-contrib/0.163.0", "ad", `{"platforms": ["linux/arm64", "linux/amd64"]}`); status != 201 || r["source"] != "admin" || r["latest"] != true {
		t.Fatalf("put: %d %v", status, r)
	}
	if status, r := e.do("PUT", "/api/v1/releases/otelcol-contrib/0.163.0", "op", `{}`); status != 403 {
		t.Fatalf("operator put: %d %v", status, r)
	}
	status, list := e.do("GET", "/api/v1/releases?distribution=otelcol-contrib", "op", "")
	items, _ := list["items"].([]any)
	var got []string
	for _, it := range items {
		m := it.(map[string]any)
		got = append(got, m["version"].(string)+" "+m["source"].(string))
	}
	if status != 200 || strings.Join(got, ", ") != "0.163.0 admin, 0.162.0 config, 0.161.0 config" {
		t.Fatalf("list: %d %v", status, got)
	}
	status, detail := e.do("GET", "/api/v1/releases/otelcol-contrib/0.162.0", "op", "")
	fleets, _ := detail["updatableFleets"].([]any)
	if status != 200 || len(fleets) != 1 || fleets[0].(map[string]any)["selectable"] != true {
		t.Fatalf("detail: %d %v", status, detail)
	}
	status, plan := e.do("GET", "/api/v1/fleets/edge/install-plan", "op", "")
	if status != 200 || plan["ready"] != true || plan["version"] != "0.161.0" || plan["source"] != "git" {
		t.Fatalf("install plan: %d %v", status, plan)
	}

	req, _ := http.NewRequest(http.MethodDelete, e.srv.URL+"/api/v1/releases/otelcol-contrib/0.163.0", nil)
	req.Header.Set("Authorization", "Bearer ad")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if status, r := e.do("GET", "/api/v1/releases/otelcol-contrib/0.163.0", "op", ""); status != 404 || r["code"] != "release_not_found" {
		t.Fatalf("after delete: %d %v", status, r)
	}
	if status, r := e.do("GET", "/api/v1/audit?targetType=release&targetId=otelcol-contrib/0.163.0", "op", ""); status != 200 || len(r["items"].([]any)) != 2 {
		t.Fatalf("audit: %d %v", status, r)
	}
}
