package ui_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/myriarch/myriarch/adapters/ui/uitest"
)

// The page in a real Chromium against the stub API: what each page shows
// and sends. Each test has a browser of its own.

const step = uitest.Step

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	uitest.Do(t, ctx, actions...)
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return uitest.Eval[T](t, ctx, expr)
}

func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	uitest.WaitFor(t, ctx, what, expr, step)
}

// signedIn opens the page, signs in with the token and goes to the route.
func signedIn(t *testing.T, s *stub, token, route string) context.Context {
	t.Helper()
	ctx := uitest.Browser(t)
	uitest.Open(t, ctx, s.url("/"), token)
	uitest.GoTo(t, ctx, route)
	return ctx
}

// js quotes a string for a JavaScript expression.
func js(s string) string { return strconv.Quote(s) }

// liveRollout is a version rollout in its second wave: one target in
// progress (downloading), two in their health wait, one failed, the
// third wave waiting behind an approval. The health wait is 30 s; a-2
// entered verifying when the test began; a-3 22 s before the page first
// read the targets, so that it has 8 s left when the page first shows it.
// a-3 is anchored at that first read, not at the stub's start: on a loaded
// machine the browser may take seconds to start, and a countdown anchored
// before it would already be over when the page first shows it.
func liveRollout(s *stub, status string) {
	id := "r-live"
	start := s.start
	verified := map[string]time.Time{"a-2": start}
	s.rollouts[id] = func(now time.Time) map[string]any {
		return map[string]any{"id": id, "fleet": "edge", "kind": "version", "status": status, "statusReason": "",
			"origin": "ui", "createdBy": "Dana Operator", "createdByActor": operatorActor, "requestReason": "CVE-2026-1234 is fixed in 0.162.0",
			"toRef": "0.162.0", "executor": "updater", "createdAt": ts(start.Add(-time.Hour)), "startedAt": ts(start.Add(-time.Hour)),
			"executionArn": "arn:aws:states:eu-west-1:123456789012:execution:myriarch-rollout:" + id,
			"policy":       policy(30),
			"prediction":   map[string]any{"finish": map[string]any{"afterApprovalOf": 2, "offsetSeconds": 720}},
			"waves": []any{
				map[string]any{"index": 0, "name": "canary", "status": "completed", "total": 1, "counts": counts("succeeded", 1), "inHealthWait": 0},
				map[string]any{"index": 1, "name": "early", "status": "running", "total": 4, "counts": counts("in_progress", 1, "verifying", 2, "failed", 1), "inHealthWait": 2},
				map[string]any{"index": 2, "name": "rest", "status": "pending", "requireApproval": true, "approvalsRequired": 2, "total": 3,
					"counts": counts("pending", 3), "inHealthWait": 0},
			},
			"targetCounts": counts("succeeded", 1, "in_progress", 1, "verifying", 2, "failed", 1, "pending", 3), "ackedFailures": []any{}}
	}
	s.targets[id] = func(now time.Time) []map[string]any {
		if _, ok := verified["a-3"]; !ok {
			verified["a-3"] = now.Add(-a3Verifying)
		}
		target := func(agent string, wave int, status string) map[string]any {
			t := map[string]any{"rolloutId": id, "agentId": agent, "displayName": "edge-" + agent, "wave": wave, "status": status, "attempt": 1,
				"fromRef": "0.161.0", "toRef": "0.162.0"}
			if v, ok := verified[agent]; ok && status == "verifying" {
				t["verifiedAt"] = ts(v)
			}
			return t
		}
		downloading := target("a-1", 1, "in_progress")
		downloading["startedAt"] = ts(start.Add(-40 * time.Second))
		downloading["progress"] = map[string]any{"phase": "downloading", "source": "updater", "downloadPercent": 42, "attempt": 1, "toVersion": "0.162.0",
			"updatedAt": ts(now), "steps": []any{
				map[string]any{"name": "offered", "status": "done"}, map[string]any{"name": "downloading", "status": "running"},
				map[string]any{"name": "verifying", "status": "pending"}, map[string]any{"name": "installing", "status": "pending"},
				map[string]any{"name": "restarting", "status": "pending"}, map[string]any{"name": "health_check", "status": "pending"},
				map[string]any{"name": "health_wait", "status": "pending"}}}
		failed := target("a-4", 1, "failed")
		failed["reason"], failed["reasonCode"] = "the updater reported INSTALL_FAILED", "install_failed"
		return []map[string]any{target("a-0", 0, "succeeded"), downloading, target("a-2", 1, "verifying"), target("a-3", 1, s.statusOf("a-3", "verifying")),
			failed, target("a-5", 2, "pending"), target("a-6", 2, "pending"), target("a-7", 2, "pending")}
	}
}

// a3Verifying is how long a-3 has verified when the page first reads the
// targets: 8 s of its 30 s health wait are left, enough for the page to
// show "Ns left" before "finishing…" on a loaded machine.
const a3Verifying = 22 * time.Second

// statusOf is a target status a test may change (tests hold s.mu when the
// stub calls it).
func (s *stub) statusOf(agent, def string) string {
	if st, ok := s.overrides[agent]; ok {
		return st
	}
	return def
}

// openPage runs the test in parallel with a stub that the fixture fills,
// and shows the route to the token's holder once the expression holds.
func openPage(t *testing.T, fixture func(*stub), token, route, ready string) (*stub, context.Context) {
	t.Helper()
	t.Parallel()
	s := newStub(t)
	fixture(s)
	ctx := signedIn(t, s, token, route)
	waitFor(t, ctx, ready, ready)
	return s, ctx
}

// viewLiveRollout shows liveRollout in the status to a viewer.
func viewLiveRollout(t *testing.T, status string) (*stub, context.Context) {
	t.Helper()
	return openPage(t, func(s *stub) {
		s.overrides = map[string]string{}
		liveRollout(s, status)
	}, viewerToken, "#/rollouts/r-live", `document.querySelector('table.targets') !== null`)
}

func TestPage_RolloutAsViewer_ShowsTheWatchPictureAndNoActions(t *testing.T) {
	_, ctx := viewLiveRollout(t, "running")

	if got := eval[string](t, ctx, `document.querySelector('.source').textContent`); got != "Policy canary-then-all · healthWait 30s · policies/canary-then-all.yaml@9f3c2a17" {
		t.Errorf("source line %q", got)
	}
	wantLink := "https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/arn:aws:states:eu-west-1:123456789012:execution:myriarch-rollout:r-live"
	if got := eval[string](t, ctx, `document.querySelector('a[href*="console.aws.amazon.com"]').href`); got != wantLink {
		t.Errorf("execution link %q, want %q", got, wantLink)
	}
	if got := eval[string](t, ctx, `document.querySelector('.prediction').textContent`); got != "12m after wave 2 is approved" {
		t.Errorf("predicted finish %q", got)
	}
	head := eval[string](t, ctx, `document.querySelector('.head').textContent`)
	for _, want := range []string{"Dana Operator", "CVE-2026-1234 is fixed in 0.162.0", "ui", "running"} {
		if !strings.Contains(head, want) {
			t.Errorf("the header lacks %q: %s", want, head)
		}
	}
	// Running work first: in progress, verifying, failed, pending, succeeded.
	groups := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tbody')].map((b) => b.dataset.key)`)
	if got := strings.Join(groups, " "); got != "s-in_progress s-verifying s-failed s-pending s-succeeded" {
		t.Errorf("groups %s", got)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tr[data-agent]')].map((r) => r.dataset.agent)`)
	if got := strings.Join(rows, " "); got != "a-1 a-2 a-3 a-4 a-5 a-6 a-7 a-0" {
		t.Errorf("rows %s", got)
	}
	for agent, want := range map[string]string{"a-1": "downloading 42%", "a-4": "the updater reported INSTALL_FAILED (install_failed)"} {
		if row := eval[string](t, ctx, `document.querySelector('tr[data-agent=`+agent+`]').textContent`); !strings.Contains(row, want) {
			t.Errorf("row %s lacks %q: %s", agent, want, row)
		}
	}
	if card := eval[string](t, ctx, `document.querySelector('[data-wave="1"]').textContent`); !strings.Contains(card, "2 in health wait · the last ends in") {
		t.Errorf("wave card 1: %s", card)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-action=pause], [data-action=abort], [data-action=rollback], form[data-action=approve]').length`); n != 0 {
		t.Errorf("a viewer sees %d action controls", n)
	}
	uitest.EveryControlLabelled(t, ctx)

	uitest.Click(t, ctx, "button[data-action=order]")
	waitFor(t, ctx, "wave order", `document.querySelector('button[data-action=order]').getAttribute('aria-pressed') === 'true'`)
	groups = eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tbody')].map((b) => b.dataset.key)`)
	if got := strings.Join(groups, " "); got != "w-0 w-1 w-2" {
		t.Errorf("wave order: groups %s", got)
	}
}

var secondsLeft = regexp.MustCompile(`^(\d+)s left$`)

// The countdown runs in the browser while the rollout is paused (the engine
// goes on evaluating), reads "finishing…" at 0 and stays so until the API
// shows the target evaluated.
func TestPage_Countdown_RunsWhilePaused_FinishingUntilEvaluated(t *testing.T) {
	s, ctx := viewLiveRollout(t, "paused")
	countdown := `((document.querySelector('.countdown[data-agent="a-3"]') || {}).textContent || '')`
	waitFor(t, ctx, "a-3's countdown", countdown+`.endsWith('s left')`)
	first := secondsLeft.FindStringSubmatch(eval[string](t, ctx, countdown))
	if first == nil {
		t.Fatalf("countdown %q", eval[string](t, ctx, countdown))
	}
	n, _ := strconv.Atoi(first[1])
	// A countdown first read at "1s left" decreases to "finishing…": 0 is
	// never shown as seconds.
	waitFor(t, ctx, "the countdown to decrease", fmt.Sprintf(`(() => { const c = %s; const m = c.match(/^(\d+)s left$/); return (m !== null && Number(m[1]) < %d) || c === 'finishing…'; })()`, countdown, n))
	waitFor(t, ctx, "finishing…", countdown+` === 'finishing…'`)
	if card := eval[string](t, ctx, `document.querySelector('[data-wave="1"] .wait').textContent`); card != "2 in health wait · the last ends in 30s" &&
		!strings.HasPrefix(card, "2 in health wait · the last ends in") {
		t.Errorf("wave card: %q", card)
	}
	time.Sleep(4 * time.Second) // more than a poll: the API still shows it verifying
	if got := eval[string](t, ctx, countdown); got != "finishing…" {
		t.Errorf("before the engine evaluated it, a-3 shows %q", got)
	}
	s.set(func(s *stub) { s.overrides["a-3"] = "succeeded" })
	waitFor(t, ctx, "a-3 succeeded", `document.querySelector('tbody[data-key=s-succeeded] tr[data-agent="a-3"]') !== null`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.countdown[data-agent="a-3"]').length`); n != 0 {
		t.Errorf("a-3 succeeded and still counts down")
	}
}

// Rollouts the engine does not evaluate show no remaining time.
func TestPage_Countdown_AbsentForRolloutsTheEngineDoesNotEvaluate(t *testing.T) {
	_, ctx := viewLiveRollout(t, "failed")
	if n := eval[int](t, ctx, `document.querySelectorAll('.countdown').length`); n != 0 {
		t.Errorf("%d countdowns on a failed rollout", n)
	}
	if card := eval[string](t, ctx, `document.querySelector('[data-wave="1"] .wait').textContent`); card != "2 in health wait" {
		t.Errorf("wave card %q, want the count without a time", card)
	}
}

// approvalRollout waits for the approval of wave 1 (1 of 2 given).
func approvalRollout(s *stub) {
	id := "r-approve"
	s.rollouts[id] = func(now time.Time) map[string]any {
		p := policy(300)
		p["kind"] = "config"
		return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": "waiting_approval", "statusReason": `wave 1 "rest" waits for approval (1 of 2)`,
			"origin": "gitops", "createdBy": "gitops", "createdByActor": "gitops", "toRef": strings.Repeat("5b0e2f6c", 8), "createdAt": ts(s.start), "policy": p,
			"waves": []any{
				map[string]any{"index": 0, "name": "canary", "status": "completed", "total": 2, "counts": counts("succeeded", 2), "inHealthWait": 0},
				map[string]any{"index": 1, "name": "rest", "status": "waiting_approval", "requireApproval": true, "approvalsRequired": 2,
					"waitingSince": ts(s.start), "approvalExpiresAt": ts(s.start.Add(72 * time.Hour)),
					"approvals": []any{map[string]any{"by": "Sam Reviewer", "byActor": "user:0b7d3e21-5a4c-4f19-8e62-1c9d7a3b5e40", "at": ts(s.start), "reason": "dashboards green"}},
					"total":     3, "counts": counts("pending", 3), "inHealthWait": 0},
			},
			"targetCounts": counts("succeeded", 2, "pending", 3), "ackedFailures": []any{}}
	}
	s.targets[id] = func(time.Time) []map[string]any { return nil }
}

func TestPage_Approve_HiddenForAViewer_RefusalInTheAPIsWords_ThenApproved(t *testing.T) {
	s, ctx := openPage(t, approvalRollout, viewerToken, "#/rollouts/r-approve", `document.querySelector('[data-wave="1"] .approval') !== null`)
	if got := eval[string](t, ctx, `document.querySelector('[data-wave="1"] .approval').textContent`); got != "Waits for approval: 1 of 2 given · expires in 71h" {
		t.Errorf("approval state %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('form[data-action=approve]').length`); n != 0 {
		t.Fatalf("a viewer sees the approval form")
	}

	uitest.SignOut(t, ctx)
	uitest.SignIn(t, ctx, operatorToken)
	uitest.GoTo(t, ctx, "#/rollouts/r-approve")
	waitFor(t, ctx, "the approval form", `document.querySelector('form[data-action=approve] textarea') !== null`)
	uitest.EveryControlLabelled(t, ctx)
	const refusal = "the approval of wave 1 \"rest\" expired at 2026-12-03T09:06:10Z"
	s.set(func(s *stub) {
		s.refuse["rollouts/r-approve/actions/approve"] = problem{409, "approval_expired", refusal}
	})
	uitest.Type(t, ctx, "#reason-1", "canary dashboards green")
	uitest.Click(t, ctx, "button[data-action=approve]")
	waitFor(t, ctx, "the refusal", `(document.querySelector('[data-msg-for=approval-1]') || {}).textContent === `+js(refusal))
	if v := eval[string](t, ctx, `document.querySelector('#reason-1').value`); v != "canary dashboards green" {
		t.Errorf("after a refusal the reason reads %q, want it kept", v)
	}

	s.set(func(s *stub) { delete(s.refuse, "rollouts/r-approve/actions/approve") })
	uitest.Click(t, ctx, "button[data-action=approve]")
	waitFor(t, ctx, "the approval", `(document.querySelector('[data-msg-for=approval-1].ok') || {}).textContent === 'Your approval of wave 1 is recorded (1 of 2).'`)
	posts := s.postsTo("rollouts/r-approve/actions/approve")
	if len(posts) != 2 || posts[1].Token != operatorToken || fmt.Sprint(posts[1].Body) != "map[reason:canary dashboards green wave:1]" {
		t.Errorf("posts %+v", posts)
	}
	if v := eval[string](t, ctx, `document.querySelector('#reason-1').value`); v != "" {
		t.Errorf("after the approval the reason reads %q, want it cleared", v)
	}

	uitest.Type(t, ctx, "#reason-1", "not during the sale")
	uitest.Click(t, ctx, "button[data-action=reject]")
	waitFor(t, ctx, "the rejection", `((document.querySelector('[data-msg-for=approval-1].ok') || {}).textContent || '').startsWith('Wave 1 rejected')`)
	if posts := s.postsTo("rollouts/r-approve/actions/reject"); len(posts) != 1 || fmt.Sprint(posts[0].Body) != "map[reason:not during the sale wave:1]" {
		t.Errorf("reject posts %+v", posts)
	}
}

func TestPage_Fleet_SelectRefusal_Preview(t *testing.T) {
	t.Parallel()
	s := newStub(t)
	s.plans = true
	const refusal = "a reason is required to choose the version of fleet edge (update.selection.requireReason)"
	s.refuse["fleets/edge/actions/select-version"] = problem{422, "selection_rejected", refusal}
	ctx := signedIn(t, s, operatorToken, "#/fleets/edge")
	waitFor(t, ctx, "the select form", `document.querySelector('form[data-action=select] select') !== null`)
	uitest.EveryControlLabelled(t, ctx)
	uitest.Click(t, ctx, "form[data-action=select] button[type=submit]")
	waitFor(t, ctx, "the refusal", `(document.querySelector('[data-msg-for=select][role=alert]') || {}).textContent === `+js(refusal))
	if posts := s.postsTo("fleets/edge/actions/select-version"); len(posts) != 1 || fmt.Sprint(posts[0].Body) != "map[expectedTargetVersion:0.161.0 version:0.162.0]" {
		t.Errorf("select posts %+v", posts)
	}

	uitest.Click(t, ctx, "button[data-action=preview][data-kind=config]")
	waitFor(t, ctx, "the plan", `document.querySelector('.plan .finish') !== null`)
	if got := eval[string](t, ctx, `document.querySelector('.plan .finish').textContent`); got != "Predicted finish: 12m after wave 1 is approved" {
		t.Errorf("finish %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('.plan .tolerance').textContent`); got != "At the latest: 12m15s after wave 1 is approved, up to 15s later (apply times at their 90th percentile and 250ms for each of 28 evaluations); sooner when agents apply faster." {
		t.Errorf("the plan's tolerance %q", got)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('.plan tbody tr')].map((r) => r.textContent)`)
	if len(rows) != 2 || !strings.Contains(rows[0], "(in 7m") || !strings.Contains(rows[1], "when wave 1 is approved12m after wave 1 is approved") {
		t.Errorf("plan rows %q", rows)
	}
	if posts := s.postsTo("plans"); len(posts) != 1 || fmt.Sprint(posts[0].Body) != "map[fleet:edge kind:config]" {
		t.Errorf("plan posts %+v", posts)
	}
}

// Without POST /plans (a 404), the preview goes away, and no error stays.
func TestPage_Fleet_PreviewHiddenWithoutPlans(t *testing.T) {
	t.Parallel()
	s := newStub(t)
	ctx := signedIn(t, s, viewerToken, "#/fleets/edge")
	waitFor(t, ctx, "the preview", `document.querySelector('button[data-action=preview]') !== null`)
	if n := eval[int](t, ctx, `document.querySelectorAll('form[data-action=select], form[data-action=clear]').length`); n != 0 {
		t.Errorf("a viewer sees %d version forms", n)
	}
	uitest.Click(t, ctx, "button[data-action=preview][data-kind=version]")
	waitFor(t, ctx, "the preview to go", `document.querySelector('.preview') === null`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.error').length`); n != 0 {
		t.Errorf("an error is shown: %s", eval[string](t, ctx, `document.querySelector('.error').textContent`))
	}
}

func TestPage_SignIn_UnknownTokenSaysSo_TokenKeptForTheTab(t *testing.T) {
	t.Parallel()
	s := newStub(t)
	liveRollout(s, "running")
	ctx := uitest.Browser(t)
	do(t, ctx, chromedp.Navigate(s.url("/ui")))
	waitFor(t, ctx, "the sign-in form", `document.querySelector('#token') !== null`)
	if got := eval[string](t, ctx, `location.pathname`); got != "/ui/" {
		t.Errorf("/ui led to %s, want /ui/", got)
	}
	uitest.Type(t, ctx, "#token", "nope")
	uitest.Click(t, ctx, "form[data-action=signin] button")
	waitFor(t, ctx, "the refusal", `document.querySelector('[data-msg]').textContent === 'the token is not known'`)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('token').value = ''`))
	uitest.SignIn(t, ctx, viewerToken)
	waitFor(t, ctx, "the rollouts", `document.querySelector('table.list a[href="#/rollouts/r-live"]') !== null`)
	if got := eval[string](t, ctx, `sessionStorage.getItem('myriarch.token')`); got != viewerToken {
		t.Errorf("sessionStorage holds %q", got)
	}
	if got := eval[string](t, ctx, `localStorage.length + document.cookie`); got != "0" {
		t.Errorf("the token went elsewhere too: %q", got)
	}
	do(t, ctx, chromedp.Reload())
	waitFor(t, ctx, "signed in again after a reload", `!document.getElementById('nav').hidden`)
	if got := eval[string](t, ctx, `document.getElementById('who').textContent`); !strings.Contains(got, "Vic Viewer (viewer)") {
		t.Errorf("header %q", got)
	}

	// The filters reach the API.
	waitFor(t, ctx, "the filters", `document.getElementById('filter-kind') !== null`)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('filter-kind'); s.value = 'version'; s.dispatchEvent(new Event('change', { bubbles: true })); })()`))
	waitFor(t, ctx, "the filtered route", `location.hash === '#/rollouts?kind=version'`)
	deadline := time.Now().Add(step)
	for {
		s.mu.Lock()
		qs := s.queries["rollouts"]
		last := qs[len(qs)-1]
		s.mu.Unlock()
		if last.Get("kind") == "version" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API was never asked for kind=version: %v", qs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	uitest.EveryControlLabelled(t, ctx)
	uitest.GoTo(t, ctx, "#/agents")
	waitFor(t, ctx, "the agents", `document.querySelector('table.agents') !== null`)
	// An agent that sends no health says so, rather than "unhealthy".
	if got := eval[string](t, ctx, `[...document.querySelectorAll('table.agents tr')].find((tr) => tr.textContent.includes('example-agent')).textContent`); !strings.Contains(got, "no health reports") || strings.Contains(got, "unhealthy") {
		t.Errorf("the agent without health reports shows %q, want \"no health reports\"", got)
	}
	// A myriarch-updater and the collector it serves name each other.
	rowOf := func(name string) string {
		return eval[string](t, ctx, `[...document.querySelectorAll('table.agents tbody tr')].find((tr) => tr.querySelector('th').firstChild.textContent === '`+name+`').querySelector('th').textContent`)
	}
	if got := rowOf("edge-gw-01"); !strings.Contains(got, "updated by vm-7-updater") {
		t.Errorf("the collector's row %q does not name its updater", got)
	}
	if got := rowOf("vm-7-updater"); !strings.Contains(got, "updater of edge-gw-01") {
		t.Errorf("the updater's row %q does not name its collector", got)
	}
	uitest.EveryControlLabelled(t, ctx)
}

// Behind API Gateway the page lives below the stage; every URL it uses is
// relative, so the stage stays in each of them.
func TestPage_BelowAStagePrefix(t *testing.T) {
	t.Parallel()
	s := newStubAt(t, "/prod")
	liveRollout(s, "running")
	ctx := uitest.Browser(t)
	do(t, ctx, chromedp.Navigate(s.url("/prod/ui")))
	waitFor(t, ctx, "the sign-in form", `document.querySelector('#token') !== null`)
	if got := eval[string](t, ctx, `location.pathname`); got != "/prod/ui/" {
		t.Errorf("/prod/ui led to %s, want /prod/ui/", got)
	}
	uitest.SignIn(t, ctx, viewerToken)
	uitest.GoTo(t, ctx, "#/rollouts/r-live")
	waitFor(t, ctx, "the rollout", `document.querySelector('.source') !== null`)
	assets := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)`)
	for _, p := range assets {
		if !strings.HasPrefix(p, "/prod/") {
			t.Errorf("the page fetched %s, outside the stage", p)
		}
	}
}

// The actions work from the keyboard alone, with the focus visible: the
// confirmation of an abort is a disclosure opened with Enter.
func TestPage_Keyboard_AbortThroughItsConfirmation(t *testing.T) {
	s, ctx := openPage(t, approvalRollout, operatorToken, "#/rollouts/r-approve", `document.querySelector('details[data-key=confirm-abort] summary') !== null`)
	do(t, ctx, chromedp.Focus(chromedp.CSS("button[data-action=pause]")), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	if got := eval[string](t, ctx, `document.activeElement.textContent`); got != "Abort…" {
		t.Fatalf("two tabs after Pause the focus is on %q, want Abort…", got)
	}
	if style := eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle`); style == "none" {
		t.Errorf("the focused control shows no outline")
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, "the confirmation", `document.querySelector('details[data-key=confirm-abort]').open`)
	do(t, ctx, chromedp.KeyEvent(kb.Tab))
	if got := eval[string](t, ctx, `document.activeElement.textContent`); got != "Abort the rollout" {
		t.Fatalf("the focus is on %q, want the confirming button", got)
	}
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, "the abort's answer", `document.querySelector('[data-msg-for=abort]') !== null`)
	if posts := s.postsTo("rollouts/r-approve/actions/abort"); len(posts) != 1 || len(posts[0].Body) != 0 {
		t.Errorf("abort posts %+v, want one with {}", posts)
	}
}

// stagedRollouts are two rollouts in stages: r-bake bakes a stage whose
// gate read one red metric (and a red dry run); r-frozen waits for a
// freeze to end. r-bake's bake and gate times are anchored at the page's
// first read of it, as liveRollout's a-3: a browser that takes 20 s to
// start on a loaded machine would otherwise find the next reading already
// due.
func stagedRollouts(s *stub) {
	stage := func(name string, wave int, status string) map[string]any {
		return map[string]any{"name": name, "wave": wave, "status": status,
			"passes": []any{map[string]any{"name": name, "targets": 2, "batchSize": 1, "batches": 2, "batchesDone": 2}}}
	}
	rolloutIn := func(id, status string, stages ...map[string]any) func(time.Time) map[string]any {
		return func(time.Time) map[string]any {
			p := policy(60)
			p["health"] = map[string]any{"interval": "30s", "failuresToStop": 2}
			p["freezes"] = []any{map[string]any{"name": "holidays", "regions": []string{"us-east-1"}}}
			return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": status, "origin": "gitops", "createdBy": "gitops",
				"createdByActor": "gitops", "toRef": "5b0e2f6c", "createdAt": ts(s.start), "policy": p, "progress": "1/3",
				"waves": []any{map[string]any{"index": 0, "name": "canary", "status": "completed", "total": 2, "counts": counts("succeeded", 2)},
					map[string]any{"index": 1, "name": "rest", "status": "running", "total": 4, "counts": counts("succeeded", 2, "pending", 2)}},
				"stages": stages, "targetCounts": counts("succeeded", 4, "pending", 2), "ackedFailures": []any{}}
		}
	}
	baking := func(start time.Time) map[string]any {
		b := stage("rest/eu-1a", 1, "baking")
		b["bakeUntil"] = ts(start.Add(90 * time.Second))
		b["gate"] = map[string]any{"since": ts(start), "until": ts(start.Add(90 * time.Second)), "nextAt": ts(start.Add(20 * time.Second)),
			"readings": 2, "consecutiveRed": 1, "lastRed": "metric export-failures (rest/eu-1/eu-1a): value 0.2 above 0.01",
			"recent": []any{map[string]any{"at": ts(start), "red": true, "checked": 4, "results": []any{
				map[string]any{"kind": "metric", "name": "export-failures", "scope": "rest/eu-1/eu-1a", "red": true, "detail": "value 0.2 above 0.01"},
				map[string]any{"kind": "metric", "name": "refused", "scope": "rest/eu-1/eu-1a", "red": true, "detail": "value 14 above 10", "dryRun": true}}}}}
		return b
	}
	frozen := stage("rest/us-east-1a", 1, "frozen")
	frozen["held"] = `freeze "holidays" (us-east-1) until 2027-01-04T00:00:00Z`
	var firstRead time.Time // of r-bake; the stub serves under its lock
	s.rollouts["r-bake"] = func(now time.Time) map[string]any {
		if firstRead.IsZero() {
			firstRead = now
		}
		return rolloutIn("r-bake", "running", stage("canary", 0, "passed"), baking(firstRead), stage("rest/us-east-1a", 1, "pending"))(now)
	}
	s.rollouts["r-frozen"] = rolloutIn("r-frozen", "frozen", stage("canary", 0, "passed"), stage("rest/eu-1a", 1, "passed"), frozen)
	for _, id := range []string{"r-bake", "r-frozen"} {
		s.targets[id] = func(time.Time) []map[string]any { return nil }
	}
}

func TestPage_Stages_BakeGateAndFreezeOverride(t *testing.T) {
	s, ctx := openPage(t, stagedRollouts, operatorToken, "#/rollouts/r-bake", `document.querySelector('[data-key="stage-rest/eu-1a"]') !== null`)
	if got := eval[string](t, ctx, `document.getElementById('stages-title').textContent`); got != "Stages 1/3 passed" {
		t.Errorf("stages heading %q", got)
	}
	card := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-key="stage-rest/eu-1a"] p')].map((p) => p.textContent)`)
	want := []*regexp.Regexp{
		regexp.MustCompile(`^wave 1 · batches 2/2$`),
		regexp.MustCompile(`^Bake ends in 1m[0-9]+s$`),
		regexp.MustCompile(`^Gate: 2 readings, 1 red in a row \(stops at 2\) · next reading in [0-9]+s$`),
		regexp.MustCompile(`^Last red: metric export-failures \(rest/eu-1/eu-1a\): value 0\.2 above 0\.01$`),
		regexp.MustCompile(`^Also red: metric refused \(rest/eu-1/eu-1a\): value 14 above 10 \[dry run\]$`),
	}
	if len(card) != len(want) {
		t.Fatalf("the baking stage's card: %q", card)
	}
	for i, re := range want {
		if !re.MatchString(card[i]) {
			t.Errorf("line %d %q, want %s", i, card[i], re)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('form[data-action=override]').length`); n != 0 {
		t.Errorf("a freeze override offered while no stage is frozen")
	}

	uitest.GoTo(t, ctx, "#/rollouts/r-frozen")
	waitFor(t, ctx, "the frozen stage", `document.querySelector('[data-key="stage-rest/us-east-1a"] form[data-action=override]') !== null`)
	if held := eval[string](t, ctx, `document.querySelector('[data-key="stage-rest/us-east-1a"] .held').textContent`); held != `Held: freeze "holidays" (us-east-1) until 2027-01-04T00:00:00Z` {
		t.Errorf("held %q", held)
	}
	uitest.EveryControlLabelled(t, ctx)
	uitest.Type(t, ctx, "#override-reason", "hotfix for INC-4711")
	uitest.Click(t, ctx, "form[data-action=override] button")
	waitFor(t, ctx, "the override's answer", `(document.querySelector('[data-msg-for=override]') || {}).textContent === 'Every freeze is bypassed for the rest of the rollout.'`)
	if posts := s.postsTo("rollouts/r-frozen/actions/resume"); len(posts) != 1 || fmt.Sprint(posts[0].Body) != "map[freezeOverride:true reason:hotfix for INC-4711]" {
		t.Errorf("resume posts %+v", posts)
	}
}
