package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/ui"
)

// The web page is served by the API's handler without a token (it asks
// for one); the API beside it still refuses requests without one.
func TestUI_ServedWithoutAToken_TheAPIStillAsksForOne(t *testing.T) {
	h := newHarness(t)
	res, err := http.Get(h.srv.URL + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `type="module"`) {
		t.Fatalf("GET /ui/: %d %s", res.StatusCode, body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != ui.ContentSecurityPolicy {
		t.Errorf("CSP %q", csp)
	}
	for _, p := range []string{"/ui/nope", "/ui/assets/"} {
		res, err := http.Get(h.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
	wantProblem(t, h.do(req{method: http.MethodGet, path: "/api/v1/me"}), http.StatusUnauthorized, CodeUnauthenticated)
}
