package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func newTest(t *testing.T) *Handler {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// assetURLs are the asset references of index.html.
var assetURLs = regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`)

func TestServe_IndexNamesVersionedAssets_RevalidatedWithAnETag(t *testing.T) {
	h := newTest(t)
	w := get(h, "GET", "/ui/")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /ui/: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("index Cache-Control %q, want no-cache", cc)
	}
	etag := w.Header().Get("ETag")
	if etag != `"`+h.Version()+`"` {
		t.Errorf("ETag %q, version %s", etag, h.Version())
	}
	body := w.Body.String()
	refs := assetURLs.FindAllStringSubmatch(body, -1)
	if len(refs) < 3 {
		t.Fatalf("index.html names %d assets: %s", len(refs), body)
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref[1], "assets/"+h.Version()+"/") {
			t.Errorf("asset %s is not under the version %s", ref[1], h.Version())
		}
		a := get(h, "GET", "/ui/"+ref[1])
		if a.Code != 200 || a.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: %d %q", ref[1], a.Code, a.Header().Get("Cache-Control"))
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, "onclick") {
		t.Errorf("index.html has inline script or style:\n%s", body)
	}
	if nm := get(h, "GET", "/ui/", "If-None-Match", etag); nm.Code != http.StatusNotModified || nm.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d with %d bytes, want 304 without a body", nm.Code, nm.Body.Len())
	}
	if head := get(h, "HEAD", "/ui/"); head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "0" {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %s", head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
	}
}

// Every answer below /ui/ carries the security headers: refusals too.
func TestServe_SecurityHeadersOnEveryAnswer(t *testing.T) {
	h := newTest(t)
	for _, c := range []struct{ method, path string }{
		{method: "GET", path: "/ui/"}, {method: "GET", path: "/ui"}, {method: "GET", path: "/ui/assets/" + h.Version() + "/app.css"}, {method: "GET", path: "/ui/nope"}, {method: "POST", path: "/ui/"},
	} {
		w := get(h, c.method, c.path)
		hd := w.Header()
		if hd.Get("Content-Security-Policy") != ContentSecurityPolicy || hd.Get("X-Content-Type-Options") != "nosniff" ||
			hd.Get("X-Frame-Options") != "DENY" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s %s: headers %v", c.method, c.path, hd)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("the CSP lacks %s", want)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe") || strings.Contains(ContentSecurityPolicy, "http") || strings.Contains(ContentSecurityPolicy, "*") {
		t.Errorf("the CSP allows more than the page's own origin: %s", ContentSecurityPolicy)
	}
}

func TestServe_ContentTypes(t *testing.T) {
	h := newTest(t)
	for file, want := range map[string]string{
		"app.css": "text/css; charset=utf-8", "js/main.js": "text/javascript; charset=utf-8", "icon.svg": "image/svg+xml",
	} {
		if got := get(h, "GET", "/ui/assets/"+h.Version()+"/"+file).Header().Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", file, got, want)
		}
	}
}

// /ui goes to /ui/ with a relative Location, so that the stage of API
// Gateway (/prod/ui) stays in the URL.
func TestServe_WithoutTheSlash_RelativeRedirect(t *testing.T) {
	h := newTest(t)
	w := get(h, "GET", "/ui")
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "ui/" {
		t.Errorf("GET /ui: %d Location %q, want 301 ui/", w.Code, w.Header().Get("Location"))
	}
	if w := get(h, "GET", "/ui?x=1"); w.Header().Get("Location") != "ui/?x=1" {
		t.Errorf("the query is lost: %q", w.Header().Get("Location"))
	}
}

// No directory is listed, no other version is served, nothing outside the
// assets: 404s.
func TestServe_NotFound_NoListing(t *testing.T) {
	h := newTest(t)
	v := h.Version()
	for _, p := range []string{
		"/ui/assets/", "/ui/assets/" + v + "/", "/ui/assets/" + v + "/js/", "/ui/assets/" + v + "/js",
		"/ui/assets/000000000000/app.css", "/ui/assets/" + v + "/nope.js", "/ui/index.html", "/ui/web/index.html",
		"/ui/assets/" + v + "/../index.html", "/ui/app.css", "/ui/assets/" + v + "/js/pages/", "/ui//",
	} {
		w := get(h, "GET", p)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
		if strings.Contains(w.Body.String(), "<a href") || strings.Contains(w.Body.String(), "main.js") {
			t.Errorf("GET %s lists files: %s", p, w.Body.String())
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: a 404 with Cache-Control %q", p, w.Header().Get("Cache-Control"))
		}
	}
}

func TestServe_OnlyGETAndHEAD(t *testing.T) {
	h := newTest(t)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if w := get(h, m, "/ui/"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /ui/: %d Allow %q", m, w.Code, w.Header().Get("Allow"))
		}
	}
}

// The version is a hash of the files: a change to any of them changes it,
// and so every asset URL.
func TestVersion_ChangesWithAnyFile(t *testing.T) {
	files := fstest.MapFS{
		"web/index.html":        {Data: []byte(`<script type="module" src="{{.Assets}}js/main.js"></script>`)},
		"web/static/js/main.js": {Data: []byte(`import './a.js';`)},
		"web/static/js/a.js":    {Data: []byte(`export const a = 1;`)},
	}
	base := version(t, files)
	for _, name := range []string{"web/index.html", "web/static/js/main.js", "web/static/js/a.js"} {
		changed := fstest.MapFS{}
		for k, v := range files {
			changed[k] = &fstest.MapFile{Data: append([]byte(nil), v.Data...)}
		}
		changed[name].Data = append(changed[name].Data, ' ')
		if version(t, changed) == base {
			t.Errorf("a change to %s keeps the version %s", name, base)
		}
	}
	if version(t, files) != base {
		t.Error("the version is not stable")
	}
}

func version(t *testing.T, files fs.FS) string {
	t.Helper()
	h, err := newHandler(files)
	if err != nil {
		t.Fatal(err)
	}
	return h.Version()
}

// The page has no inline handlers or styles and reaches no other origin:
// the CSP would block them.
func TestAssets_NothingTheCSPBlocks(t *testing.T) {
	inline := regexp.MustCompile(`(?i)\son[a-z]+=|style=|javascript:|\.innerHTML|eval\(|new Function|https?://(?:cdn|fonts|unpkg)`)
	err := fs.WalkDir(embedded, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, p)
		if err != nil {
			return err
		}
		if m := inline.Find(b); m != nil {
			t.Errorf("%s has %q, which the CSP blocks", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
