package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/myriarch/myriarch/adapters/ui/uitest"
)

// stalledRollout is r-stalled: a configuration rollout whose second wave
// failed (its one target reported FAILED) and paused it, with the
// prediction the API gives it: no finish, and why.
func stalledRollout(s *stub) {
	id := "r-stalled"
	s.rollouts[id] = func(time.Time) map[string]any {
		return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": "paused",
			"statusReason": `wave 1 "rest" reached the failure threshold: 1 of 1 targets failed`,
			"origin":       "gitops", "createdBy": "gitops", "createdByActor": "gitops", "toRef": "5b0e2f6c", "createdAt": ts(s.start), "policy": policy(60),
			"prediction": map[string]any{"start": map[string]any{"at": ts(s.start)}, "approvals": []any{}, "assumptions": []any{}, "complete": false,
				"reason":       "the rollout is paused: no target starts until it is resumed",
				"applySeconds": map[string]any{"median": 20, "p90": 40, "source": "default", "samples": 0}},
			"waves": []any{map[string]any{"index": 0, "name": "canary", "status": "completed", "total": 1, "counts": counts("succeeded", 1)},
				map[string]any{"index": 1, "name": "rest", "status": "failed", "total": 1, "counts": counts("failed", 1)}},
			"targetCounts": counts("succeeded", 1, "failed", 1), "ackedFailures": []any{}}
	}
	s.targets[id] = func(time.Time) []map[string]any {
		return []map[string]any{
			{"rolloutId": id, "agentId": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c01", "displayName": "vm", "wave": 0, "status": "succeeded", "attempt": 1, "toRef": "5b0e2f6c"},
			{"rolloutId": id, "agentId": "0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c02", "displayName": "vm", "wave": 1, "status": "failed", "attempt": 1, "toRef": "5b0e2f6c",
				"reason": "the agent reported FAILED for the configuration: unknown receiver", "reasonCode": "apply_failed"},
		}
	}
}

// A paused rollout shows why it has no predicted finish instead of a time
// in the past; its failed wave's bar is red and says failed, not done; the
// targets table names each target's stage (its wave's, which is not
// split), and tells the two agents called vm apart by their ids.
func TestPage_StalledRollout_NoFinishFailedBarStagesAndNames(t *testing.T) {
	_, ctx := openPage(t, stalledRollout, viewerToken, "#/rollouts/r-stalled", `document.querySelector('table.targets') !== null`)

	if got := eval[string](t, ctx, `document.querySelector('.prediction').textContent`); got != "none: the rollout is paused: no target starts until it is resumed" {
		t.Errorf("predicted finish %q", got)
	}
	if head := eval[string](t, ctx, `document.querySelector('.head').textContent`); strings.Contains(head, "ago") || strings.Contains(head, "(now)") {
		t.Errorf("the header shows a finish in the past: %s", head)
	}
	card := `document.querySelector('[data-wave="1"] .progress')`
	if got := eval[string](t, ctx, card+`.textContent`); got != " failed: 1 of 1 failed" {
		t.Errorf("failed wave's bar says %q", got)
	}
	if got := eval[string](t, ctx, card+`.querySelector('progress').getAttribute('aria-label')`); got != "wave 1 failed" {
		t.Errorf("failed wave's bar is labelled %q", got)
	}
	red := eval[string](t, ctx, `getComputedStyle(document.querySelector('[data-wave="1"] progress')).accentColor`)
	blue := eval[string](t, ctx, `getComputedStyle(document.querySelector('[data-wave="0"] progress')).accentColor`)
	if red != "rgb(127, 29, 29)" || red == blue {
		t.Errorf("failed wave's bar is %s, the completed one's %s: want the error colour rgb(127, 29, 29) on the failed one only", red, blue)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-wave="0"] .progress').textContent`); got != " 1/1 done" {
		t.Errorf("completed wave's bar says %q", got)
	}

	heads := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets thead th')].map((th) => th.textContent)`)
	if got := strings.Join(heads, ","); got != "Agent,Wave,Stage,Status,Detail" {
		t.Errorf("columns %s", got)
	}
	stages := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tr[data-agent] td.stage')].map((td) => td.textContent)`)
	if got := strings.Join(stages, ","); got != "rest,canary" {
		t.Errorf("stages %s, want the failed target's rest, then the canary's", got)
	}
	names := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tr[data-agent] th')].map((th) => th.textContent)`)
	if got := strings.Join(names, ","); got != "vm 0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c02,vm 0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c01" {
		t.Errorf("names %s, want each vm with the id that tells it apart", got)
	}
	uitest.EveryControlLabelled(t, ctx)
}

// The agents list has region and zone columns from the agents' attributes,
// and agents that share a name show the shortest prefix of their ids (8
// characters at least) that tells them apart; an agent whose name is its
// own shows none.
func TestPage_Agents_RegionZoneAndCollidingNames(t *testing.T) {
	agent := func(id, name, region, zone string) map[string]any {
		attrs := map[string]string{}
		if region != "" {
			attrs["cloud.region"], attrs["cloud.availability_zone"] = region, zone
		}
		return map[string]any{"id": id, "displayName": name, "fleet": "edge", "attributes": attrs, "version": "0.161.0",
			"config": map[string]any{"drifted": false, "status": "APPLIED"}, "health": map[string]any{"reported": false, "healthy": false},
			"online": true, "gone": false}
	}
	_, ctx := openPage(t, func(s *stub) {
		s.agents = []any{
			agent("0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c01", "vm", "eu-west-1", "eu-west-1a"),
			agent("0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c02", "vm", "eu-west-1", "eu-west-1b"),
			agent("3f2a9c10-0000-4000-8000-000000000003", "vm", "us-east-1", "us-east-1a"),
			agent("7b3c0d21-0000-4000-8000-000000000004", "edge-gw-01", "", ""),
		}
	}, viewerToken, "#/agents", `document.querySelector('table.agents tbody tr') !== null`)

	heads := eval[[]string](t, ctx, `[...document.querySelectorAll('table.agents thead th')].map((th) => th.textContent)`)
	if got := strings.Join(heads, ","); got != "Agent,Fleet,Region,Zone,Version,Configuration,Health,Connection,Last seen" {
		t.Errorf("columns %s", got)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('table.agents tbody tr')].map((r) =>
		[r.querySelector('th').textContent, r.querySelector('td.region').textContent, r.querySelector('td.zone').textContent].join('|'))`)
	want := []string{
		"vm 0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c01|eu-west-1|eu-west-1a", // ids of one moment: as much as tells them apart
		"vm 0192f1c4-7a3b-7c2e-9d41-5e6f7a8b9c02|eu-west-1|eu-west-1b",
		"vm 3f2a9c10…|us-east-1|us-east-1a", // 8 characters tell it from the others
		"edge-gw-01|–|–",                    // its own name; no placement reported
	}
	if got := strings.Join(rows, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// A token the API does not know is refused with an error the page styles
// as its other errors, announced (role alert) and tied to the token
// field; signing in then clears it.
func TestPage_SignIn_ErrorIsStyledAndAnnounced(t *testing.T) {
	t.Parallel()
	s := newStub(t)
	ctx := uitest.Browser(t)
	do(t, ctx, chromedp.Navigate(s.url("/ui/")))
	waitFor(t, ctx, "the sign-in form", `document.querySelector('#token') !== null`)
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-msg]:not([hidden])').length`); n != 0 {
		t.Errorf("an empty message box is shown before any sign-in")
	}
	uitest.Type(t, ctx, "#token", "nope")
	uitest.Click(t, ctx, "form[data-action=signin] button")
	waitFor(t, ctx, "the refusal", `document.querySelector('[data-msg]').textContent === 'the token is not known'`)
	got := eval[map[string]any](t, ctx, `(() => { const m = document.querySelector('[data-msg]'); const st = getComputedStyle(m);
		return {cls: m.className, role: m.getAttribute('role'), hidden: m.hidden, color: st.color, bg: st.backgroundColor,
			invalid: document.getElementById('token').getAttribute('aria-invalid'), describedBy: document.getElementById('token').getAttribute('aria-describedby') === m.id}; })()`)
	want := map[string]any{"cls": "error", "role": "alert", "hidden": false, "color": "rgb(127, 29, 29)", "bg": "rgb(254, 226, 226)", "invalid": "true", "describedBy": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the refusal's %s is %v, want %v", k, got[k], v)
		}
	}
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('token').value = ''`))
	uitest.SignIn(t, ctx, viewerToken)
	waitFor(t, ctx, "signed in", `!document.getElementById('nav').hidden`)
}

// appliedRollout is r-applied: a GitOps rollout whose revision the
// operator of the tests applied, its second wave waiting for approval.
func appliedRollout(s *stub) {
	id := "r-applied"
	s.rollouts[id] = func(time.Time) map[string]any {
		return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": "waiting_approval", "statusReason": `wave 1 "rest" waits for approval`,
			"origin": "gitops", "createdBy": "gitops", "createdByActor": "gitops",
			"appliedBy": []any{map[string]any{"by": "Dana Operator", "byActor": operatorActor, "at": ts(s.start)}},
			"toRef":     "5b0e2f6c", "createdAt": ts(s.start), "policy": policy(60),
			"waves": []any{map[string]any{"index": 0, "name": "canary", "status": "completed", "total": 1, "counts": counts("succeeded", 1)},
				map[string]any{"index": 1, "name": "rest", "status": "waiting_approval", "requireApproval": true, "approvalsRequired": 1, "total": 1,
					"counts": counts("pending", 1), "waitingSince": ts(s.start), "approvalExpiresAt": ts(s.start.Add(72 * time.Hour))}},
			"targetCounts": counts("succeeded", 1, "pending", 1), "ackedFailures": []any{}}
	}
	s.targets[id] = func(time.Time) []map[string]any {
		return []map[string]any{
			{"rolloutId": id, "agentId": "a-0", "displayName": "edge-a-0", "wave": 0, "status": "succeeded", "attempt": 1, "toRef": "5b0e2f6c"},
			{"rolloutId": id, "agentId": "a-1", "displayName": "edge-a-1", "wave": 1, "status": "pending", "attempt": 1, "toRef": "5b0e2f6c"},
		}
	}
}

// The page names whom the rule of no self-approval counts as the creator
// of a GitOps rollout (who applied its revision), says who may approve a
// waiting wave, and tells the applier that another operator must.
func TestPage_Approval_NamesTheApplierTheRuleCounts(t *testing.T) {
	_, ctx := openPage(t, appliedRollout, operatorToken, "#/rollouts/r-applied", `document.querySelector('form[data-action=approve]') !== null`)
	if head := eval[string](t, ctx, `document.querySelector('.head').textContent`); !strings.Contains(head, "Created bygitops (revision applied by Dana Operator)") {
		t.Errorf("the header does not name the applier: %s", head)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-wave="1"] .who-approves').textContent`); got != "Who may approve: an operator or admin other than Dana Operator (applied its revision)." {
		t.Errorf("who may approve: %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('form[data-action=approve] .hint').textContent`); got != "You applied the revision that created this rollout: another operator must approve it." {
		t.Errorf("the applier's hint: %q", got)
	}
}

// windowRollout is r-window: a running rollout whose targets left all wait
// for a maintenance window that opens in 7 hours.
func windowRollout(s *stub) {
	id := "r-window"
	s.rollouts[id] = func(now time.Time) map[string]any {
		opens := ts(s.start.Add(7 * time.Hour))
		return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": "running", "origin": "gitops", "createdBy": "gitops",
			"createdByActor": "gitops", "toRef": "5b0e2f6c", "createdAt": ts(s.start), "policy": policy(60),
			"prediction": map[string]any{"start": map[string]any{"at": opens}, "finish": map[string]any{"at": ts(s.start.Add(8 * time.Hour))},
				"approvals": []any{}, "assumptions": []any{}, "complete": true,
				"applySeconds": map[string]any{"median": 20, "p90": 40, "source": "default", "samples": 0}},
			"waves":        []any{map[string]any{"index": 0, "name": "all", "status": "running", "total": 20, "counts": counts("succeeded", 3, "waiting_window", 17)}},
			"targetCounts": counts("succeeded", 3, "waiting_window", 17), "ackedFailures": []any{}}
	}
	s.targets[id] = func(time.Time) []map[string]any {
		return []map[string]any{{"rolloutId": id, "agentId": "a-0", "displayName": "edge-a-0", "wave": 0, "status": "waiting_window", "attempt": 1, "toRef": "5b0e2f6c"}}
	}
}

// When every target left waits for a maintenance window, the header says
// that nothing progresses before the first start, and why.
func TestPage_WindowClosed_SaysNothingProgressesBeforeItOpens(t *testing.T) {
	_, ctx := openPage(t, windowRollout, viewerToken, "#/rollouts/r-window", `document.querySelector('table.targets') !== null`)
	got := eval[string](t, ctx, `(document.querySelector('.head .window') || {}).textContent || ''`)
	if !strings.HasPrefix(got, "Nothing progresses before ") || !(strings.Contains(got, "(in 6h5") || strings.Contains(got, "(in 7h)")) || !strings.HasSuffix(got, ": 17 targets wait for a maintenance window.") {
		t.Errorf("window line %q", got)
	}
}
