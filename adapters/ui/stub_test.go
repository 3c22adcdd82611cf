package ui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/ui"
)

// stub is the REST API as the page sees it, with answers in the shapes of
// api/openapi.yaml built around the current time, and every write
// recorded. The live stack's tests (local/stack) drive the real API; these
// pin what the page shows for states that are hard to reach there (a
// countdown at 0 that the engine has not evaluated yet, a rollout in
// stages with a red gate, a plan).
type stub struct {
	t     *testing.T
	srv   *httptest.Server
	start time.Time

	mu       sync.Mutex
	plans    bool                                          // POST /plans exists
	posts    []posted                                      // every POST, in order
	queries  map[string][]url.Values                       // GET queries by path
	rollouts map[string]func(now time.Time) map[string]any // getRollout by id
	targets  map[string]func(now time.Time) []map[string]any
	refuse   map[string]problem // POST path → the problem it answers
	// overrides change a target's status (liveRollout's a-3).
	overrides map[string]string
	// agents replaces the agents listAgents answers (nil: the three of
	// the inventory below).
	agents []any
}

type posted struct {
	Path, Token string
	Body        map[string]any
}

type problem struct {
	Status       int
	Code, Detail string
}

const (
	viewerToken   = "viewer-token"
	operatorToken = "operator-token"
	operatorActor = "user:00000000-0000-4000-8000-000000000002"
)

func newStub(t *testing.T) *stub {
	t.Helper()
	return newStubAt(t, "")
}

// newStubAt serves the page and the API below a path prefix, as API
// Gateway does below its stage (/prod/ui/, /prod/api/v1/): the handlers
// see the paths without it, as the api function does.
func newStubAt(t *testing.T, prefix string) *stub {
	t.Helper()
	page, err := ui.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &stub{t: t, start: time.Now().UTC(), queries: map[string][]url.Values{}, refuse: map[string]problem{},
		rollouts: map[string]func(time.Time) map[string]any{}, targets: map[string]func(time.Time) []map[string]any{}}
	mux := http.NewServeMux()
	mux.Handle("/ui", page)
	mux.Handle("/ui/", page)
	mux.HandleFunc("/api/v1/", s.api)
	var h http.Handler = mux
	if prefix != "" {
		h = http.StripPrefix(prefix, mux)
	}
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *stub) url(path string) string { return s.srv.URL + path }

func (s *stub) api(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	me := map[string]any{}
	switch token {
	case viewerToken:
		me = map[string]any{"actor": "token:00000000-0000-4000-8000-00000000000a", "displayName": "Vic Viewer", "role": "viewer", "permissions": []string{"read"}}
	case operatorToken:
		me = map[string]any{"actor": operatorActor, "displayName": "Dana Operator", "role": "operator",
			"permissions": []string{"read", "rollouts:operate", "fleets:set_version"}}
	default:
		writeProblem(w, problem{401, "unauthenticated", "the token is not known"})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v1/")
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPost {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.posts = append(s.posts, posted{Path: path, Token: token, Body: body})
		if p, ok := s.refuse[path]; ok {
			writeProblem(w, p)
			return
		}
		s.write(w, path, now, body)
		return
	}
	s.queries[path] = append(s.queries[path], r.URL.Query())
	parts := strings.Split(path, "/")
	switch {
	case path == "me":
		writeJSON(w, me)
	case path == "rollouts":
		var items []map[string]any
		for _, f := range s.rollouts {
			items = append(items, f(now))
		}
		writeJSON(w, map[string]any{"items": items})
	case len(parts) == 2 && parts[0] == "rollouts" && s.rollouts[parts[1]] != nil:
		writeJSON(w, s.rollouts[parts[1]](now))
	case len(parts) == 3 && parts[0] == "rollouts" && parts[2] == "targets" && s.targets[parts[1]] != nil:
		writeJSON(w, map[string]any{"items": s.targets[parts[1]](now)})
	case path == "fleets":
		writeJSON(w, map[string]any{"items": []any{fleet()}})
	case path == "fleets/edge":
		writeJSON(w, fleet())
	case path == "fleets/edge/version-options":
		writeJSON(w, map[string]any{"allowed": true, "target": map[string]any{"version": "0.161.0", "source": "git"}, "executor": "updater",
			"versionPolicy": "default", "platforms": []string{},
			"options": []any{
				map[string]any{"version": "0.162.0", "selectable": true, "isGitTarget": false, "isSelected": false, "prerelease": false},
				map[string]any{"version": "0.161.0", "selectable": false, "reasonCode": "current_target", "isGitTarget": true, "isSelected": false, "prerelease": false},
			}})
	case path == "agents" && s.agents != nil:
		writeJSON(w, map[string]any{"items": s.agents})
	case path == "agents":
		writeJSON(w, map[string]any{"items": []any{map[string]any{"id": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d", "displayName": "edge-gw-01", "fleet": "edge",
			"attributes": map[string]string{}, "version": "0.161.0", "config": map[string]any{"drifted": false, "status": "APPLIED"},
			"health": map[string]any{"reported": true, "healthy": true, "status": "StatusOK"}, "online": true, "gone": false, "lastSeen": now.Format(time.RFC3339)},
			map[string]any{"id": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0e", "displayName": "example-agent", "fleet": "edge",
				"attributes": map[string]string{}, "version": "0.161.0", "config": map[string]any{"drifted": false, "status": "APPLIED"},
				"health": map[string]any{"reported": false, "healthy": false}, "online": true, "gone": false, "lastSeen": now.Format(time.RFC3339)},
			map[string]any{"id": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0f", "displayName": "vm-7-updater",
				"attributes": map[string]string{"myriarch.updater.collector": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c0d"}, "version": "0.1.0",
				"config": map[string]any{"drifted": false}, "health": map[string]any{"reported": true, "healthy": true, "status": "StatusOK"},
				"online": true, "gone": false, "lastSeen": now.Format(time.RFC3339)}}})
	default:
		writeProblem(w, problem{404, "not_found", "no operation at " + r.URL.Path})
	}
}

// write answers a POST that is not refused.
func (s *stub) write(w http.ResponseWriter, path string, now time.Time, body map[string]any) {
	parts := strings.Split(path, "/")
	switch {
	case path == "plans" && s.plans:
		writeJSON(w, map[string]any{"fleet": body["fleet"], "kind": body["kind"],
			"waves": []any{
				map[string]any{"index": 0, "name": "canary", "targets": 2, "start": map[string]any{"at": now.Add(time.Minute).Format(time.RFC3339)},
					"end": map[string]any{"at": now.Add(7*time.Minute + 30*time.Second).Format(time.RFC3339)}},
				map[string]any{"index": 1, "name": "rest", "targets": 48, "start": map[string]any{"afterApprovalOf": 1, "offsetSeconds": 0},
					"end": map[string]any{"afterApprovalOf": 1, "offsetSeconds": 720}},
			},
			"prediction": map[string]any{"finish": map[string]any{"afterApprovalOf": 1, "offsetSeconds": 720},
				"finishPessimistic": map[string]any{"afterApprovalOf": 1, "offsetSeconds": 735},
				"tolerance":         map[string]any{"laterSeconds": 15, "evaluationSeconds": 0.25, "evaluations": 28}}})
	case len(parts) == 4 && parts[0] == "rollouts" && parts[2] == "actions" && s.rollouts[parts[1]] != nil:
		writeJSON(w, s.rollouts[parts[1]](now))
	case path == "fleets/edge/actions/select-version":
		writeJSON(w, map[string]any{"target": map[string]any{"version": body["version"], "source": "ui"}, "planned": true, "rolloutId": "r-new", "targets": 50,
			"message": fmt.Sprintf("version %v selected for fleet edge", body["version"])})
	default:
		writeProblem(w, problem{404, "not_found", "no operation at /api/v1/" + path})
	}
}

// postsTo are the bodies posted to a path.
func (s *stub) postsTo(path string) []posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []posted
	for _, p := range s.posts {
		if p.Path == path {
			out = append(out, p)
		}
	}
	return out
}

func (s *stub) set(f func(s *stub)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeProblem(w http.ResponseWriter, p problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "https://myriarch.dev/problems/" + p.Code, "title": "refused",
		"status": p.Status, "code": p.Code, "detail": p.Detail})
}

func fleet() map[string]any {
	return map[string]any{"name": "edge", "commit": "9f3c2a17", "distribution": "otelcol-contrib", "gitVersion": "0.161.0", "executor": "updater",
		"configPolicy": "canary-then-all", "versionPolicy": "default", "selector": map[string]any{},
		"selection":      map[string]any{"enabled": true, "versionRange": ">=0.161.0, <=0.162.0", "allowDowngrade": false, "requireReason": true},
		"versionTarget":  map[string]any{"version": "0.161.0", "source": "git"},
		"agents":         map[string]any{"total": 50, "online": 49, "onTargetVersion": 12, "onConfigHash": 50, "drifted": 0, "gone": 1, "assignmentErrors": 0},
		"activeRollouts": []any{}}
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func counts(kv ...any) map[string]int {
	c := map[string]int{"pending": 0, "waiting_window": 0, "in_progress": 0, "verifying": 0, "succeeded": 0, "failed": 0, "skipped": 0, "cancelled": 0, "rolled_back": 0}
	for i := 0; i < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1].(int)
	}
	return c
}

// policy is a snapshot with the health wait and the source line.
func policy(healthWaitSeconds int) map[string]any {
	return map[string]any{"name": "canary-then-all", "path": "policies/canary-then-all.yaml", "commit": "9f3c2a17", "builtIn": false, "kind": "version",
		"waves": []any{}, "maxConcurrent": 5, "healthWait": fmt.Sprintf("%ds", healthWaitSeconds), "healthWaitSeconds": healthWaitSeconds,
		"applyTimeout": "30m0s", "offlineGracePeriod": "15m0s", "failureThreshold": map[string]any{"maxFailed": 1}, "onFailure": "pause",
		"timezoneAttribute": "site.timezone", "approvals": map[string]any{"required": 2, "expiry": "72h0m0s"},
		"source": fmt.Sprintf("Policy canary-then-all · healthWait %ds · policies/canary-then-all.yaml@9f3c2a17", healthWaitSeconds)}
}
