// Package uitest runs the web page in a real headless Chromium: Debian's
// chromium, driven over the DevTools protocol by chromedp. The browser
// tests are part of the suite (`make test` installs chromium through
// scripts/with-chromium.sh); a missing browser fails them, except in an
// explicit unit-only run outside CI (MYRIARCH_UNIT_ONLY), which skips
// them as local/storetest does for DynamoDB Local.
package uitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvChromium names the browser binary; without it Path looks for
// chromium on PATH.
const EnvChromium = "MYRIARCH_CHROMIUM"

// Width and Height are the window the page is tested and shown at.
const Width, Height = 1280, 800

// Path is the Chromium binary: $MYRIARCH_CHROMIUM, else chromium or
// chromium-browser on PATH.
func Path() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium is not installed: run the tests through scripts/with-chromium.sh (make test), or apt-get install chromium")
}

// Options start Chromium headless at Width×Height with a fresh profile
// (chromedp makes a temporary user-data-dir), without the sandbox when
// running as root (which it refuses otherwise), and without the
// background traffic that a machine without internet access refuses.
func Options(path string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(path),
		chromedp.WindowSize(Width, Height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.DisableGPU,
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}

// Browser starts a Chromium of the test's own and returns the context of
// its first tab; the browser stops when the test ends. Every uncaught
// JavaScript exception of the page fails the test.
func Browser(t testing.TB) context.Context {
	t.Helper()
	path, err := Path()
	if err != nil {
		if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
			t.Skipf("MYRIARCH_UNIT_ONLY: %v; the browser tests run with make test", err)
		}
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), Options(path)...)
	ctx, cancel := chromedp.NewContext(alloc)
	var mu sync.Mutex
	var thrown []string
	err = chromedp.Listen(ctx, func(ev any) { // starts the browser and its first tab
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			thrown = append(thrown, describe(e.ExceptionDetails))
			mu.Unlock()
		}
	})
	if err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range thrown {
			t.Errorf("the page threw: %s", e)
		}
	})
	return ctx
}

func describe(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "an exception"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", strings.TrimSpace(s), d.URL, d.LineNumber)
}

// Step is the longest wait for one thing the page does.
const Step = 10 * time.Second

// Do runs browser actions, failing the test with what the page shows.
func Do(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		body, _ := Text(ctx, "main")
		t.Fatalf("browser: %v\nthe page shows: %s", err, body)
	}
}

// Eval is the value of a JavaScript expression in the page.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Open loads the page at base (the server's root URL) and signs in with
// the token.
func Open(t testing.TB, ctx context.Context, base, token string) {
	t.Helper()
	Do(t, ctx, chromedp.Navigate(strings.TrimSuffix(base, "/")+"/ui/"))
	SignIn(t, ctx, token)
}

// SignIn fills in the sign-in form and waits for the navigation.
func SignIn(t testing.TB, ctx context.Context, token string) {
	t.Helper()
	WaitFor(t, ctx, "the sign-in form", `document.querySelector('form[data-action=signin] #token') !== null`, Step)
	Type(t, ctx, "#token", token)
	Click(t, ctx, "form[data-action=signin] button")
	WaitFor(t, ctx, "the navigation", `!document.getElementById('nav').hidden`, Step)
}

// SignOut presses the header's sign-out button.
func SignOut(t testing.TB, ctx context.Context) {
	t.Helper()
	Click(t, ctx, "button[data-action=signout]")
}

// GoTo changes the page's route, e.g. #/rollouts/r-1 (a navigation within
// the page, which has no load event to wait for).
func GoTo(t testing.TB, ctx context.Context, route string) {
	t.Helper()
	Do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, route)))
}

// SkewClock makes the page's clock (Date.now) run ahead of the machine's
// by d from the next page load on, as a browser whose clock is off does.
func SkewClock(t testing.TB, ctx context.Context, d time.Duration) {
	t.Helper()
	src := fmt.Sprintf(`(() => { const now = Date.now.bind(Date); Date.now = () => now() + %d; })();`, d.Milliseconds())
	c, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	if _, err := chromedp.Call(c, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		t.Fatalf("skew the page's clock: %v", err)
	}
}

// EveryControlLabelled fails the test for every form control of the page
// without a label (or an aria-label) and every button without a name.
func EveryControlLabelled(t testing.TB, ctx context.Context) {
	t.Helper()
	bad := Eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea, button')]
		.filter((el) => el.tagName === 'BUTTON' ? el.textContent.trim() === '' : el.labels.length === 0 && !el.getAttribute('aria-label'))
		.map((el) => el.outerHTML)`)
	for _, b := range bad {
		t.Errorf("a control without a label: %s", b)
	}
}

// Text is the text of the first element the CSS selector matches, or ""
// when none does (never an error: a page that has not drawn it yet).
func Text(ctx context.Context, selector string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.textContent : ""; })()`, selector)))
}

// WaitFor polls a JavaScript expression until it is true, or fails the test
// after timeout with what the page shows.
func WaitFor(t testing.TB, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		body, _ := Text(ctx, "main")
		t.Fatalf("waiting for %s (%s): %v\nthe page shows: %s", what, expr, err, body)
	}
}

// Click clicks the first element the CSS selector matches, with the mouse,
// as a user would.
func Click(t testing.TB, ctx context.Context, selector string) {
	t.Helper()
	onLiveNode(t, ctx, chromedp.Click(chromedp.CSS(selector)))
}

// Type focuses the first element the CSS selector matches and types text
// into it, key by key.
func Type(t testing.TB, ctx context.Context, selector, text string) {
	t.Helper()
	onLiveNode(t, ctx, chromedp.SendKeys(chromedp.CSS(selector), text))
}

// onLiveNode runs one action on a node it looks up. The page redraws on
// every poll and every tick, and a redraw may replace the node between
// chromedp's lookup and its click or focus; DevTools then answers that the
// node is gone, and nothing happened to the page. That is tried again on
// the node that replaced it, until Step runs out; every other error fails
// the test at once.
func onLiveNode(t testing.TB, ctx context.Context, action chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, Step)
	defer cancel()
	for {
		err := chromedp.Do(c, action)
		if err == nil {
			return
		}
		if !goneNode(err) || c.Err() != nil {
			body, _ := Text(ctx, "main")
			t.Fatalf("browser: %v\nthe page shows: %s", err, body)
		}
	}
}

// goneNode reports the DevTools errors of a node that a redraw removed.
func goneNode(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not find node with given id") || strings.Contains(s, "Node is detached from document") ||
		strings.Contains(s, "No node with given id found")
}
