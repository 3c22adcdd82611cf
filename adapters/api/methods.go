package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// routeMethods are the methods the API routes, in the order an Allow
// header lists them.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete}

// methodNotAllowed answers a 405 with the Allow header of the path (RFC
// 9110 requires it): chi knows the methods, but hands them only to its own
// plain-text handler, so the router is asked again for each method. HEAD
// is allowed wherever GET is (chi's GetHead middleware serves it).
func methodNotAllowed(routes chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.RawPath // chi routes on the escaped path when there is one
		if path == "" {
			path = r.URL.Path
		}
		var allow []string
		for _, m := range routeMethods {
			probe := m
			if m == http.MethodHead {
				probe = http.MethodGet
			}
			if routes.Match(chi.NewRouteContext(), probe, path) {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, r, problem(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allow, ", ")))
	}
}
