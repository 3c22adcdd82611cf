package integration

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
)

// TestAPIOnDynamoDB_AgentInventory lists agents through the real indexes:
// a fleet's agents (byFleet) in pages of the store's tokens, every agent
// (a Scan), the assignment errors (the sparse index), a lookup by display
// name (byName), and the display names of a rollout's targets.
func TestAPIOnDynamoDB_AgentInventory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := 1; i <= 7; i++ {
		labels := map[string]string{"labels.fleet": "edge", "host.name": fmt.Sprintf("edge-gw-%02d", i)}
		if i == 1 {
			labels["labels.wave"] = "canary"
		}
		e.seedAgent(fmt.Sprintf("0192f1c4-0000-7000-8000-0000000000%02d", i), labels)
	}
	e.seedAgent("0192f1c4-0000-7000-8000-000000000101", map[string]string{"host.name": "localhost"})
	e.seedAgent("0192f1c4-0000-7000-8000-000000000102", map[string]string{"host.name": "localhost"})
	if status, applied := e.do("POST", "/api/v1/revisions", "ad", revisionJSON); status != 200 {
		t.Fatalf("apply: %d %v", status, applied)
	}
	// Recorded after the apply, which would assign it afresh: an agent as the
	// assignment leaves one that two fleets select.
	conflicted := agent.Agent{ID: "0192f1c4-0000-7000-8000-000000000201", Attributes: map[string]string{"host.name": "both"},
		AssignmentError: "selected by fleets core and edge", LastSeen: t0}
	if err := e.st.RecordAgent(ctx, conflicted); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := e.st.AssignAgent(ctx, conflicted.ID, 1, func(agent.Agent) assignment.Outcome {
		return assignment.Outcome{Error: conflicted.AssignmentError}
	}); err != nil {
		t.Fatal(err)
	}

	ids := func(page map[string]any) []string {
		var out []string
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	// every page of a listing, and the number of pages
	all := func(query string) ([]string, int) {
		var got []string
		token, pages := "", 0
		for {
			path := "/api/v1/agents?" + query
			if token != "" {
				path += "&pageToken=" + url.QueryEscape(token)
			}
			status, page := e.do("GET", path, "op", "")
			if status != 200 {
				t.Fatalf("%s: %d %v", path, status, page)
			}
			pages++
			got = append(got, ids(page)...)
			next, _ := page["nextPageToken"].(string)
			if token = next; token == "" {
				return got, pages
			}
		}
	}

	edge, pages := all("fleet=edge&limit=3")
	if len(edge) != 7 || pages != 3 || edge[0] != "0192f1c4-0000-7000-8000-000000000001" || edge[6] != "0192f1c4-0000-7000-8000-000000000007" {
		t.Errorf("edge: %v in %d pages, want the 7 edge agents by id in 3", edge, pages)
	}
	everyone, _ := all("limit=4")
	if len(everyone) != 10 {
		t.Errorf("every agent: %d, want 10: %v", len(everyone), everyone)
	}
	if conflicts, _ := all("assignmentError=true"); strings.Join(conflicts, ",") != conflicted.ID {
		t.Errorf("assignment errors: %v, want %s", conflicts, conflicted.ID)
	}
	if canary, _ := all("selector=labels.wave%3Dcanary&online=true"); len(canary) != 1 {
		t.Errorf("the online canary: %v", canary)
	}

	// A token is good for its own listing only.
	_, p1 := e.do("GET", "/api/v1/agents?fleet=edge&limit=3", "op", "")
	fleetToken := p1["nextPageToken"].(string)
	if status, p := e.do("GET", "/api/v1/agents?pageToken="+url.QueryEscape(fleetToken), "op", ""); status != 400 || p["code"] != "request_invalid" {
		t.Errorf("a fleet's token for every agent: %d %v, want 400", status, p)
	}

	// By id, by display name, ambiguous, unknown, impossible.
	status, a := e.do("GET", "/api/v1/agents/edge-gw-03", "op", "")
	if status != 200 || a["id"] != "0192f1c4-0000-7000-8000-000000000003" || a["fleet"] != "edge" || a["displayName"] != "edge-gw-03" {
		t.Errorf("edge-gw-03: %d %v", status, a)
	}
	if status, a := e.do("GET", "/api/v1/agents/0192f1c4-0000-7000-8000-000000000003", "op", ""); status != 200 || a["hostName"] != "edge-gw-03" {
		t.Errorf("by id: %d %v", status, a)
	}
	status, p := e.do("GET", "/api/v1/agents/localhost", "op", "")
	cands, _ := p["candidates"].([]any)
	if detail, _ := p["detail"].(string); status != 409 || p["code"] != "agent_ambiguous" ||
		!strings.Contains(detail, "0192f1c4-0000-7000-8000-000000000101 (") || !strings.Contains(detail, "0192f1c4-0000-7000-8000-000000000102 (") ||
		len(cands) != 2 {
		t.Errorf("localhost: %d %v", status, p)
	}
	if status, p := e.do("GET", "/api/v1/agents/nobody", "op", ""); status != 404 || p["code"] != "agent_not_found" {
		t.Errorf("nobody: %d %v", status, p)
	}
	if status, p := e.do("GET", "/api/v1/agents/"+strings.Repeat("x", 5000), "op", ""); status != 404 || p["code"] != "agent_not_found" {
		t.Errorf("a 5,000-character id: %d %v", status, p["code"])
	}
	if status, p := e.do("GET", "/api/v1/agents?fleet="+strings.Repeat("e", 5000), "op", ""); status != 200 || len(p["items"].([]any)) != 0 {
		t.Errorf("an impossible fleet: %d %v", status, p)
	}

	// The edge rollout's targets carry the names, read in one batch.
	_, list := e.do("GET", "/api/v1/rollouts?kind=config", "op", "")
	id := list["items"].([]any)[0].(map[string]any)["id"].(string)
	_, targets := e.do("GET", "/api/v1/rollouts/"+id+"/targets", "op", "")
	for _, it := range targets["items"].([]any) {
		tv := it.(map[string]any)
		if n := tv["displayName"].(string); !strings.HasPrefix(n, "edge-gw-") || !strings.HasSuffix(tv["agentId"].(string), n[len(n)-2:]) {
			t.Errorf("target %v: display name %q", tv["agentId"], n)
		}
	}
	// getAgent shows the agent's target of that rollout.
	_, a = e.do("GET", "/api/v1/agents/edge-gw-01", "op", "")
	ts, _ := a["targets"].([]any)
	if len(ts) != 1 || ts[0].(map[string]any)["rolloutId"] != id || ts[0].(map[string]any)["active"] != true {
		t.Errorf("targets of edge-gw-01: %v, want its target of %s", ts, id)
	}
}
