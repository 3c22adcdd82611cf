// Package ui is the operators' web page under /ui/: plain HTML, CSS and
// JavaScript modules embedded in the binary (no build step, nothing fetched
// at run time), served by the same handler as the REST API, locally and in
// the api Lambda. The page asks for a bearer token and reads the API with
// it; serving the page itself needs none.
//
// Caching: every asset lives under assets/<version>/, where the version is
// a hash of all embedded files, so an asset URL never changes its content
// and is cached as immutable; index.html names the version and is
// revalidated on every load (no-cache with an ETag). Module imports are
// relative (./api.js), so they stay inside one version.
//
// Every URL the page uses is relative to /ui/, never absolute: behind API
// Gateway the page lives under the stage (/prod/ui/), which the api
// function never sees in its paths.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
)

//go:embed web
var embedded embed.FS

// Prefix is where the page is served.
const Prefix = "/ui/"

// ContentSecurityPolicy allows the page's own scripts, styles, images and
// API calls and nothing else: no inline script or style, no other origin,
// no framing, no form posted anywhere (the forms are handled by script).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Cache-Control of the two kinds of answers.
const (
	cacheIndex     = "no-cache"                            // revalidate: it names the asset version
	cacheImmutable = "public, max-age=31536000, immutable" // a versioned asset never changes
)

// contentTypes are the only kinds of file served; an embedded file of
// another kind is a 404 (the page has none).
var contentTypes = map[string]string{
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".html": "text/html; charset=utf-8",
}

// Handler serves the page. The zero value is not usable: call New.
type Handler struct {
	version string            // the hash of every embedded file
	index   []byte            // index.html with the asset version filled in
	etag    string            // of index
	assets  map[string][]byte // by path below static/
}

// New reads the embedded files once.
func New() (*Handler, error) {
	return newHandler(embedded)
}

func newHandler(files fs.FS) (*Handler, error) {
	static, err := fs.Sub(files, "web/static")
	if err != nil {
		return nil, err
	}
	h := &Handler{assets: map[string][]byte{}}
	err = fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, p)
		h.assets[p] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ui: read the assets: %w", err)
	}
	page, err := fs.ReadFile(files, "web/index.html")
	if err != nil {
		return nil, fmt.Errorf("ui: read index.html: %w", err)
	}
	tmpl, err := template.New("index.html").Parse(string(page))
	if err != nil {
		return nil, fmt.Errorf("ui: parse index.html: %w", err)
	}
	h.version = versionOf(h.assets, page)
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, struct{ Assets string }{"assets/" + h.version + "/"}); err != nil {
		return nil, fmt.Errorf("ui: render index.html: %w", err)
	}
	h.index = buf.Bytes()
	h.etag = `"` + h.version + `"`
	return h, nil
}

// versionOf is the first 12 hex digits of the sha256 of every asset, path
// and content in path order, and of the page's template: any change to a
// file changes every asset URL.
func versionOf(assets map[string][]byte, index []byte) string {
	sum := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(assets)) {
		fmt.Fprintf(sum, "%s\x00%d\x00", p, len(assets[p]))
		sum.Write(assets[p])
	}
	sum.Write(index)
	return hex.EncodeToString(sum.Sum(nil))[:12]
}

// Version is the asset version the page names (for tests and logs).
func (h *Handler) Version() string { return h.version }

// ServeHTTP answers /ui, /ui/ and /ui/assets/<version>/<file>; everything
// else below /ui/ is a 404, directories included (no listing).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	p := r.URL.Path
	switch {
	case p == strings.TrimSuffix(Prefix, "/"):
		h.toSlash(w, r)
	case p == Prefix:
		h.serve(w, r, h.index, contentTypes[".html"], h.etag, cacheIndex)
	case strings.HasPrefix(p, Prefix+"assets/"+h.version+"/"):
		name := strings.TrimPrefix(p, Prefix+"assets/"+h.version+"/")
		b, ok := h.assets[name]
		typ := contentTypes[path.Ext(name)]
		if !ok || typ == "" {
			plain(w, http.StatusNotFound, "no such file: "+p)
			return
		}
		h.serve(w, r, b, typ, `"`+h.version+`"`, cacheImmutable)
	default:
		plain(w, http.StatusNotFound, "no such file: "+p)
	}
}

// toSlash sends /ui to /ui/ with a relative Location, which the browser
// resolves against the URL it asked for: behind API Gateway that keeps the
// stage (/prod/ui → /prod/ui/), which an absolute /ui/ would drop.
func (h *Handler) toSlash(w http.ResponseWriter, r *http.Request) {
	loc := path.Base(Prefix) + "/"
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", loc)
	w.Header().Set("Cache-Control", cacheIndex)
	w.WriteHeader(http.StatusMovedPermanently)
}

// serve writes a file with its validator; a matching If-None-Match is a
// 304 without a body.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, body []byte, typ, etag, cache string) {
	hd := w.Header()
	hd.Set("Cache-Control", cache)
	hd.Set("ETag", etag)
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", typ)
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// matches reports whether an If-None-Match header names the ETag (a list
// of entity tags, or *).
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// secure sets the headers every answer below /ui/ carries.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY") // frame-ancestors for browsers that predate it
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, msg)
}
