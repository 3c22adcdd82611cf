package stack

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/ui/uitest"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// uiHealthWait is the health wait of the rollout the page shows: long
// enough to watch it count down, also when the browser, beside the other
// tests on two cores, takes ten seconds to show the page (at 15 s it once
// showed the countdown at its last second).
const uiHealthWait = 25 * time.Second

// uiSkew puts the browser's clock ahead of the stack's. The page then
// reaches 0 that long before the engine ends the wait, and shows
// "finishing…" until a poll shows the target evaluated: without the skew
// that moment lasts from 0 to one poll, too short to test reliably.
const uiSkew = 5 * time.Second

var leftSeconds = regexp.MustCompile(`^(\d+)s left$`)

// TestUI_RolloutPage_LiveStack drives the web page in Chromium against the
// whole local stack: a configuration rollout of simulated collectors whose
// canary counts down its health wait in the browser (to "finishing…",
// until the engine has evaluated it), whose approval a viewer cannot give
// and an operator gives through the page, and a version choice that the
// API refuses, in its own words.
func TestUI_RolloutPage_LiveStack(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // a stack of its own
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "ui-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	browser := uitest.Browser(t)
	uitest.SkewClock(t, browser, uiSkew)

	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.CanaryCount = 3, s.GatewayURL, s.AgentToken, 10, 1
	fleet := connectFleet(t, ctx, s, cfg)
	admin := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, fmt.Sprintf("%ds", int(uiHealthWait.Seconds())))
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "enabled: true", "enabled: true\n      requireReason: true", 1))
	if err := s.apply(ctx, admin, files, "ui-1"); err != nil {
		t.Fatal(err)
	}
	hash1 := revision.Hash(files["configs/edge.yaml"])
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == hash1 && a.Healthy })); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte("# ui-2\n")...)
	id, err := s.applyForRollout(ctx, admin, files, "ui-2")
	if err != nil {
		t.Fatal(err)
	}

	// A viewer watches the canary's health wait count down.
	uitest.Open(t, browser, s.APIURL, s.ViewerToken)
	uitest.GoTo(t, browser, "#/rollouts/"+id)
	countdown := `((document.querySelector('tbody[data-key=s-verifying] .countdown') || {}).textContent || '')`
	uitest.WaitFor(t, browser, "the canary's countdown", countdown+`.endsWith('s left')`, uiHealthWait)
	m := leftSeconds.FindStringSubmatch(uitest.Eval[string](t, browser, countdown))
	if m == nil {
		t.Fatalf("countdown %q", uitest.Eval[string](t, browser, countdown))
	}
	first, _ := strconv.Atoi(m[1])
	if max := int((uiHealthWait - uiSkew) / time.Second); first > max {
		t.Errorf("the countdown starts at %ds, more than the health wait less the skew (%ds)", first, max)
	}
	uitest.WaitFor(t, browser, "the countdown to go down", fmt.Sprintf(`(() => { const m = %s.match(/^(\d+)s left$/); return m !== null && Number(m[1]) < %d; })()`, countdown, first), 3*time.Second)
	if card := uitest.Eval[string](t, browser, `document.querySelector('[data-wave="0"] .wait').textContent`); !strings.HasPrefix(card, "1 in health wait · the last ends in ") {
		t.Errorf("the canary's wave card says %q", card)
	}
	uitest.WaitFor(t, browser, "finishing…", countdown+` === 'finishing…'`, uiHealthWait)
	if card := uitest.Eval[string](t, browser, `document.querySelector('[data-wave="0"] .wait').textContent`); card != "1 in health wait · finishing…" {
		t.Errorf("at 0 the wave card says %q", card)
	}
	if r, _, err := s.Deps.Store.LoadRollout(ctx, id); err != nil || r.Waves[0].Status != rollout.WaveRunning {
		t.Errorf("the page said finishing… with the canary wave %s (%v): the skew did not hold", r.Waves[0].Status, err)
	}
	uitest.WaitFor(t, browser, "the canary evaluated", `document.querySelector('tbody[data-key=s-succeeded] tr') !== null && document.querySelectorAll('.countdown').length === 0`, uiHealthWait)

	// Wave 1 waits for approval: not for a viewer to give.
	approvalLine := `((document.querySelector('[data-wave="1"] .approval') || {}).textContent || '')`
	uitest.WaitFor(t, browser, "wave 1 waiting for approval", approvalLine+`.startsWith('Waits for approval: 0 of 1 given')`, uiHealthWait)
	if n := uitest.Eval[int](t, browser, `document.querySelectorAll('form[data-action=approve], [data-action=pause], [data-action=abort]').length`); n != 0 {
		t.Errorf("a viewer sees %d action controls", n)
	}
	// The admin applied the revision: the page names the admin as the rule
	// of no self-approval counts it, and says who may approve.
	if head := uitest.Eval[string](t, browser, `document.querySelector('.head').textContent`); !strings.Contains(head, "gitops (revision applied by local admin)") {
		t.Errorf("the header does not name the admin who applied the revision: %s", head)
	}
	if who := uitest.Eval[string](t, browser, `document.querySelector('[data-wave="1"] .who-approves').textContent`); who != "Who may approve: an operator or admin other than local admin (applied its revision)." {
		t.Errorf("who may approve: %q", who)
	}
	if src := uitest.Eval[string](t, browser, `document.querySelector('.source').textContent`); src != fmt.Sprintf("Policy demo-config · healthWait %s · policies/demo-config.yaml@ui-2", uiHealthWait) {
		t.Errorf("source line %q", src)
	}
	if href := uitest.Eval[string](t, browser, `(document.querySelector('a[href*="states/home"]') || {}).href || ''`); !strings.Contains(href, "#/v2/executions/details/arn:aws:states:") {
		t.Errorf("execution link %q", href)
	}

	// The operator approves it.
	uitest.SignOut(t, browser)
	uitest.SignIn(t, browser, s.OperatorToken)
	uitest.GoTo(t, browser, "#/rollouts/"+id)
	uitest.WaitFor(t, browser, "the approval form", `document.querySelector('#reason-1') !== null`, uitest.Step)
	uitest.EveryControlLabelled(t, browser)
	uitest.Type(t, browser, "#reason-1", "canary green in the browser")
	uitest.Click(t, browser, "button[data-action=approve]")
	uitest.WaitFor(t, browser, "the approval", `document.querySelector('[data-msg-for=approval-1]') !== null`, uitest.Step)
	if msg := uitest.Eval[string](t, browser, `document.querySelector('[data-msg-for=approval-1]').textContent`); !strings.HasPrefix(msg, `Wave 1 "rest" is approved`) {
		t.Fatalf("the approval says %q", msg)
	}
	r, _, err := s.Deps.Store.LoadRollout(ctx, id)
	if err != nil || !r.Waves[1].Approved || len(r.Waves[1].Approvals) != 1 || r.Waves[1].Approvals[0].Reason != "canary green in the browser" {
		t.Errorf("wave 1 after the page's approval: %+v (%v)", r.Waves[1], err)
	}

	// A version choice without the reason the fleet requires: the page
	// shows the API's refusal as the API words it.
	want := refusalOf(t, ctx, s, map[string]string{"version": "0.163.0", "expectedTargetVersion": "0.161.0"})
	uitest.GoTo(t, browser, "#/fleets/edge")
	uitest.WaitFor(t, browser, "the select form", `document.querySelector('#select-version option[value="0.163.0"]') !== null`, uitest.Step)
	uitest.EveryControlLabelled(t, browser)
	uitest.Click(t, browser, "form[data-action=select] button[type=submit]")
	uitest.WaitFor(t, browser, "the refusal", `document.querySelector('[data-msg-for=select][role=alert]') !== null`, uitest.Step)
	if got := uitest.Eval[string](t, browser, `document.querySelector('[data-msg-for=select][role=alert]').textContent`); got != want {
		t.Errorf("the page shows %q, the API said %q", got, want)
	}
}

// refusalOf is the detail of the API's refusal of a select-version body
// (the demo client's error ends with it).
func refusalOf(t *testing.T, ctx context.Context, s *Stack, body map[string]string) string {
	t.Helper()
	op := client{base: s.APIURL, token: s.OperatorToken}
	err := op.do(ctx, "POST", "/api/v1/fleets/edge/actions/select-version", body, nil)
	const refused = ": 422 selection_rejected: "
	if err == nil || !strings.Contains(err.Error(), refused) {
		t.Fatalf("select-version %v: %v, want a 422 selection_rejected", body, err)
	}
	return err.Error()[strings.Index(err.Error(), refused)+len(refused):]
}
