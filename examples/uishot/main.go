// Command uishot captures the rollout page of a live local stack in
// headless Chromium, for the README (docs/img/rollout-page.png): simulated
// collectors get a new collector version chosen by an operator, through
// the updater; the picture is taken while the first wave works (targets
// downloading, others in their health wait, counting down) and the second
// waits behind an approval. Run it with `make screenshot`, which starts
// DynamoDB Local and makes sure Chromium is installed.
//
//	uishot -out docs/img/rollout-page.png
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/myriarch/myriarch/adapters/ui/uitest"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/stack"
)

func main() {
	out := flag.String("out", "docs/img/rollout-page.png", "where the PNG goes")
	agents := flag.Int("agents", 12, "simulated collectors")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, *out, *agents); err != nil {
		log.Fatal("uishot: ", err)
	}
}

func run(ctx context.Context, out string, agents int) error {
	s, err := stack.Start(ctx, stack.Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "uishot-", Clock: time.Now, PlannerEvery: time.Hour})
	if err != nil {
		return err
	}
	defer s.Stop()
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token = agents, s.GatewayURL, s.AgentToken
	cfg.Zones = []string{"eu-west-1/eu-west-1a", "us-east-1/us-east-1a"}
	cfg.Delays.UpdateStep = 3 * time.Second // slower updates, which drift apart (±25 % per agent)
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = fleet.Stop() }()
	if err := waitFor(ctx, func() (bool, error) {
		as, err := s.Deps.Store.AllAgents(ctx)
		return len(as) >= agents, err
	}); err != nil {
		return fmt.Errorf("agents: %w", err)
	}

	files, err := revision.ReadDir("examples/quickstart")
	if err != nil {
		return err
	}
	// A first wave of 40 percent, a health wait of a minute, and an
	// approval before the rest.
	files["policies/demo-version.yaml"] = []byte(strings.NewReplacer(
		"    - name: early\n      percent: 20", "    - name: early\n      percent: 40",
		"    - name: rest\n      percent: 100", "    - name: rest\n      percent: 100\n      requireApproval: true",
		"healthWait: 30s", "healthWait: 1m",
	).Replace(string(files["policies/demo-version.yaml"])))
	admin := api{base: s.APIURL, token: s.AdminToken}
	if err := admin.do(ctx, "POST", "/api/v1/revisions", map[string]any{"commit": "9f3c2a17", "files": text(files)}, nil); err != nil {
		return err
	}
	hash := revision.Hash(files["configs/edge.yaml"])
	if err := fleet.Wait(ctx, func(st []simfleet.AgentState) bool {
		for _, a := range st {
			if a.ConfigHash != hash || !a.Healthy {
				return false
			}
		}
		return len(st) > 0
	}); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	operator := api{base: s.APIURL, token: s.OperatorToken}
	var sel struct {
		RolloutID string `json:"rolloutId"`
	}
	err = operator.do(ctx, "POST", "/api/v1/fleets/edge/actions/select-version",
		map[string]string{"version": "0.162.0", "reason": "CVE-2026-1234 is fixed in 0.162.0", "expectedTargetVersion": "0.161.0"}, &sel)
	if err != nil || sel.RolloutID == "" {
		return fmt.Errorf("select 0.162.0: rollout %q, %v", sel.RolloutID, err)
	}
	return capture(ctx, s, sel.RolloutID, out)
}

// capture opens the rollout page as the operator and takes the picture
// once a target of the first wave is in its health wait and another works.
func capture(ctx context.Context, s *stack.Stack, id, out string) error {
	path, err := uitest.Path()
	if err != nil {
		return err
	}
	alloc, cancel := chromedp.NewExecAllocator(ctx, uitest.Options(path)...)
	defer cancel()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if err := chromedp.Do(tab, chromedp.Navigate(s.APIURL+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), s.OperatorToken),
		chromedp.Click(chromedp.CSS("form[data-action=signin] button")),
		chromedp.WaitVisible(chromedp.CSS("#nav")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/rollouts/%s'`, id)),
	); err != nil {
		return fmt.Errorf("open the page: %w", err)
	}
	// Best: a countdown under way beside a target still working; else,
	// once the first wave's targets all wait, a countdown alone.
	counting := `/^\d+s left$/.test((document.querySelector('tbody[data-key=s-verifying] .countdown') || {}).textContent)`
	working := `document.querySelector('tbody[data-key=s-in_progress] .step.st-running') !== null`
	if err := poll(tab, counting+" && "+working, 30*time.Second); err != nil {
		if err := poll(tab, counting, time.Minute); err != nil {
			shown, _ := uitest.Text(tab, "main")
			return fmt.Errorf("wait for a rollout in flight: %w; the page shows: %s", err, shown)
		}
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("rollout %s captured in %s (%d bytes)\n", id, out, len(png))
	return nil
}

func poll(tab context.Context, expr string, timeout time.Duration) error {
	_, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	return err
}

// api calls the REST API with a bearer token; a refusal is an error with
// the problem's detail.
type api struct{ base, token string }

func (a api) do(ctx context.Context, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func text(files map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = string(v)
	}
	return out
}

func waitFor(ctx context.Context, ok func() (bool, error)) error {
	for {
		done, err := ok()
		if err == nil && done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
