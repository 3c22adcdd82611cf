package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/ui/uitest"
)

// placedRollout is r-where, a rollout in stages: the canary (not split)
// holds c0 in eu-1a and c1 in us-1b and bakes with a red gate; rest/eu-1a
// holds z0 and z1; rest/eu-1b holds 12 agents, of which the API lists the
// first 11 (as if its bound were 11), so the card says how many more.
func placedRollout(s *stub) {
	id := "r-where"
	pass := func(name, region, zone string, regions, zones, agents []string, targets int) map[string]any {
		p := map[string]any{"name": name, "targets": targets, "batchSize": 1, "batches": targets, "batchesDone": 0,
			"regions": regions, "zones": zones, "agents": agents}
		if region != "" {
			p["region"], p["zone"] = region, zone
		}
		return p
	}
	var many []string
	for _, c := range "abcdefghijk" {
		many = append(many, "y"+string(c))
	}
	stages := []any{
		map[string]any{"name": "canary", "wave": 0, "status": "failed", "lastRed": "metric export-failures (canary): value 0.2 above 0.01",
			"passes": []any{pass("canary", "", "", []string{"eu-1", "us-1"}, []string{"eu-1a", "us-1b"}, []string{"c1", "c0"}, 2)}},
		map[string]any{"name": "rest/eu-1a", "wave": 1, "status": "pending",
			"passes": []any{pass("rest/eu-1/eu-1a", "eu-1", "eu-1a", []string{"eu-1"}, []string{"eu-1a"}, []string{"z0", "z1"}, 2)}},
		map[string]any{"name": "rest/eu-1b", "wave": 1, "status": "pending",
			"passes": []any{pass("rest/eu-1/eu-1b", "eu-1", "eu-1b", []string{"eu-1"}, []string{"eu-1b"}, many, 12)}},
	}
	s.rollouts[id] = func(time.Time) map[string]any {
		return map[string]any{"id": id, "fleet": "edge", "kind": "config", "status": "paused", "origin": "gitops", "createdBy": "gitops",
			"createdByActor": "gitops", "toRef": "5b0e2f6c", "createdAt": ts(s.start), "policy": policy(60), "progress": "0/3",
			"waves": []any{map[string]any{"index": 0, "name": "canary", "status": "failed", "total": 2, "counts": counts("succeeded", 2)},
				map[string]any{"index": 1, "name": "rest", "status": "pending", "total": 14, "counts": counts("pending", 14)}},
			"stages": stages, "targetCounts": counts("succeeded", 2, "pending", 14), "ackedFailures": []any{}}
	}
	s.targets[id] = func(time.Time) []map[string]any {
		target := func(agent string, wave int, status, stage, pass string, batch int) map[string]any {
			return map[string]any{"rolloutId": id, "agentId": agent, "displayName": "edge-" + agent, "wave": wave, "status": status, "attempt": 1,
				"fromRef": "4a0e1f5b", "toRef": "5b0e2f6c", "stage": stage, "pass": pass, "batch": batch}
		}
		out := []map[string]any{target("c0", 0, "succeeded", "canary", "canary", 1), target("c1", 0, "succeeded", "canary", "canary", 0),
			target("z0", 1, "pending", "rest/eu-1a", "rest/eu-1/eu-1a", 1), target("z1", 1, "pending", "rest/eu-1a", "rest/eu-1/eu-1a", 0)}
		for i, a := range append(append([]string(nil), many...), "yl") {
			out = append(out, target(a, 1, "pending", "rest/eu-1b", "rest/eu-1/eu-1b", i))
		}
		return out
	}
}

// The rollout page places each target (its stage and batch), lists under
// each pass its agents and the regions and zones it covers where its name
// does not say them, and shows the targets of one stage on request.
func TestPage_Stages_WhereTargetsSit(t *testing.T) {
	_, ctx := openPage(t, func(s *stub) {
		placedRollout(s)
		s.overrides = map[string]string{}
		liveRollout(s, "running")
	}, viewerToken, "#/rollouts/r-where", `document.querySelector('table.targets') !== null`)

	heads := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets thead th')].map((th) => th.textContent)`)
	if got := strings.Join(heads, "|"); got != "Agent|Wave|Stage|Batch|Status|Detail" {
		t.Errorf("target columns %s", got)
	}
	if row := eval[[]string](t, ctx, `[...document.querySelectorAll('tr[data-agent=z0] th, tr[data-agent=z0] td')].map((c) => c.textContent)`); strings.Join(row, "|") != "edge-z0|1|rest/eu-1a|rest/eu-1/eu-1a#1|pending|" {
		t.Errorf("z0's row %q", row)
	}

	passes := eval[[]string](t, ctx, `[...document.querySelectorAll('ul.passes li')].map((li) => li.textContent)`)
	want := []string{
		"canary: 2 targets, batches 0/2 (1 at a time) · regions eu-1, us-1 · zones eu-1a, us-1b · agents: edge-c1, edge-c0",
		"rest/eu-1/eu-1a: 2 targets, batches 0/2 (1 at a time) · agents: edge-z0, edge-z1",
		"rest/eu-1/eu-1b: 12 targets, batches 0/12 (1 at a time) · agents: edge-ya, edge-yb, edge-yc, edge-yd, edge-ye, edge-yf, edge-yg, edge-yh, edge-yi, edge-yj, … and 2 more",
	}
	if strings.Join(passes, "\n") != strings.Join(want, "\n") {
		t.Errorf("passes\n%s\nwant\n%s", strings.Join(passes, "\n"), strings.Join(want, "\n"))
	}
	uitest.EveryControlLabelled(t, ctx)

	// The red stage's targets, then all again.
	uitest.Click(t, ctx, `[data-key="stage-canary"] button[data-action=stage]`)
	waitFor(t, ctx, "the canary's targets", `document.getElementById('targets-title').textContent === 'Targets of stage canary (2 of 16)'`)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets tr[data-agent]')].map((r) => r.dataset.agent)`)
	if got := strings.Join(rows, " "); got != "c0 c1" {
		t.Errorf("rows of stage canary: %s", got)
	}
	if pressed := eval[string](t, ctx, `document.querySelector('[data-key="stage-canary"] button[data-action=stage]').getAttribute('aria-pressed')`); pressed != "true" {
		t.Errorf("the canary's button aria-pressed %q", pressed)
	}
	uitest.Click(t, ctx, `[data-key="stage-canary"] button[data-action=stage]`)
	waitFor(t, ctx, "every target", `document.getElementById('targets-title').textContent === 'Targets (16)'`)

	// A rollout without stages has a stage column too: a wave that is not
	// split is one stage, named after the wave; no batch column.
	uitest.GoTo(t, ctx, "#/rollouts/r-live")
	waitFor(t, ctx, "r-live's targets", `document.querySelector('tr[data-agent="a-1"]') !== null`)
	heads = eval[[]string](t, ctx, `[...document.querySelectorAll('table.targets thead th')].map((th) => th.textContent)`)
	if got := strings.Join(heads, "|"); got != "Agent|Wave|Stage|Status|Detail|Progress" {
		t.Errorf("columns of a rollout without stages %s", got)
	}
	for agent, want := range map[string]string{"a-0": "canary", "a-1": "early", "a-5": "rest"} {
		if got := eval[string](t, ctx, `document.querySelector('tr[data-agent="`+agent+`"] td.stage').textContent`); got != want {
			t.Errorf("stage of %s %q, want its wave's name %q", agent, got, want)
		}
	}
}
