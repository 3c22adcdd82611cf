package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A planner that had not finished when the API answered (planned false)
// creates its rollout later: the demo finds it among the fleet's rollouts
// instead of failing. A finished plan without a rollout is an error.
func TestPlannedRollout_WaitsForALatePlanner(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/rollouts" || r.URL.Query().Get("fleet") != "edge" || r.URL.Query().Get("kind") != "config" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusNotFound)
			return
		}
		id := "r-old"
		if lists.Add(1) > 3 { // the planner finishes after a few looks
			id = "r-new"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": []map[string]string{{"id": id}}})
	}))
	defer srv.Close()
	c := client{base: srv.URL}
	ctx := context.Background()

	got, err := plannedRollout(ctx, c, "edge", "config", "r-old", false, "")
	if err != nil || got != "r-new" {
		t.Fatalf("late plan: got %q, %v; want r-new", got, err)
	}
	if got, err := plannedRollout(ctx, c, "edge", "config", "r-old", true, "r-given"); err != nil || got != "r-given" {
		t.Errorf("answered plan: got %q, %v; want r-given", got, err)
	}
	if _, err := plannedRollout(ctx, c, "edge", "config", "r-old", true, ""); err == nil || !strings.Contains(err.Error(), "created no config rollout") {
		t.Errorf("finished plan without a rollout: err %v, want created no config rollout", err)
	}
}
