package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/revision"
)

// A configuration of 512 KiB, and one at the 4 MiB limit beside it (together
// more than one DynamoDB transaction holds), validate, apply and read back
// byte for byte as the gateway reads them; one byte over the limit is
// refused by validate and apply alike, with nothing stored.
func TestAPIOnDynamoDB_LargeConfigurationsApplyWhole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seedAgent("e1", map[string]string{"labels.fleet": "edge", "labels.wave": "canary"})
	var base struct {
		Commit string            `json:"commit"`
		Files  map[string]string `json:"files"`
	}
	if err := json.Unmarshal([]byte(revisionJSON), &base); err != nil {
		t.Fatal(err)
	}
	body := func(commit string, configs map[string]string) string {
		files := map[string]string{}
		for p, b := range base.Files {
			files[p] = b
		}
		files["fleets/bulk.yaml"] = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: bulk}\nspec:\n  selector: {matchAttributes: {labels.fleet: bulk}}\n"
		for p, b := range configs {
			files[p] = b
		}
		raw, err := json.Marshal(map[string]any{"commit": commit, "files": files})
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}

	edge, bulk := configYAML(512<<10, 1), configYAML(revision.MaxConfigBytes, 2)
	good := body("1a2b3c4d", map[string]string{"configs/edge.yaml": edge, "configs/bulk.yaml": bulk})
	if status, v := e.do("POST", "/api/v1/revisions/validate", "ad", good); status != 200 || v["valid"] != true {
		t.Fatalf("validate: %d %v", status, v["issues"])
	}
	if status, applied := e.do("POST", "/api/v1/revisions", "ad", good); status != 200 {
		t.Fatalf("apply: %d %v", status, applied)
	}
	for _, want := range []string{edge, bulk} {
		got, ct, err := e.st.ConfigByHash(ctx, revision.Hash([]byte(want)))
		if err != nil || ct != "text/yaml" || !bytes.Equal(got, []byte(want)) {
			t.Fatalf("configuration of %d bytes read back as %d bytes (%q, %v)", len(want), len(got), ct, err)
		}
	}
	_, list := e.do("GET", "/api/v1/rollouts?kind=config", "op", "")
	if items, _ := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["toRef"] != revision.Hash([]byte(edge)) {
		t.Errorf("configuration rollouts %v, want one of edge to its 512 KiB configuration", list["items"])
	}

	over := body("5e6f7a8b", map[string]string{"configs/edge.yaml": edge, "configs/bulk.yaml": configYAML(revision.MaxConfigBytes+1, 3)})
	status, v := e.do("POST", "/api/v1/revisions/validate", "ad", over)
	if status != 200 || v["valid"] != false || !hasIssue(v["issues"], "config_too_large", "configs/bulk.yaml") {
		t.Errorf("validate over the limit: %d valid %v issues %v, want config_too_large at configs/bulk.yaml", status, v["valid"], v["issues"])
	}
	status, p := e.do("POST", "/api/v1/revisions", "ad", over)
	if status != 422 || p["code"] != "revision_invalid" || !hasIssue(p["issues"], "config_too_large", "configs/bulk.yaml") {
		t.Errorf("apply over the limit: %d %v %v, want 422 revision_invalid with config_too_large", status, p["code"], p["issues"])
	}
	if _, cur := e.do("GET", "/api/v1/revisions/current", "op", ""); cur["commit"] != "1a2b3c4d" {
		t.Errorf("current revision %v, want 1a2b3c4d still", cur["commit"])
	}
}

// configYAML is a collector configuration of exactly n bytes whose lines
// differ (seeded), so that chunks out of order could not compare equal.
func configYAML(n int, seed uint64) string {
	var b strings.Builder
	b.WriteString("receivers:\n")
	for i := 0; ; i++ {
		line := fmt.Sprintf("  r%07d: {endpoint: \"%016x\"}\n", i, seed*1_000_003+uint64(i)*2_654_435_761)
		if b.Len()+len(line) > n {
			break
		}
		b.WriteString(line)
	}
	if r := n - b.Len(); r > 0 {
		b.WriteString(strings.Repeat("#", r-1) + "\n")
	}
	return b.String()
}

func hasIssue(issues any, code, path string) bool {
	list, _ := issues.([]any)
	for _, x := range list {
		if is, _ := x.(map[string]any); is["code"] == code && is["path"] == path && is["severity"] == "error" {
			return true
		}
	}
	return false
}
