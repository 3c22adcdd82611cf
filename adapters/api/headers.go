package api

import (
	"fmt"
	"net/http"
)

// Header limits. net/http refuses a request whose header exceeds its
// Server.MaxHeaderBytes before any handler runs, with a text/plain 431 of
// its own (net/http's conn.serve writes it on the connection), so the API
// keeps its own limit below the server's: a header between the two gets
// the API's 431 problem. ServerMaxHeaderBytes is what the local stack's
// http.Server reads; behind API Gateway the gateway refuses headers over
// its own quotas before the api Lambda runs.
const (
	// MaxHeaderBytes is the largest request line and header the API
	// answers: far above any token or cookie a client sends, far below
	// what would cost memory.
	MaxHeaderBytes = 64 << 10
	// ServerMaxHeaderBytes is the http.Server's limit for the API: twice
	// net/http's default of 1 MiB, so that a header of a megabyte, the
	// usual probe, still reaches the API and is refused in its format.
	ServerMaxHeaderBytes = 2 << 20
)

// limitHeaders refuses a request whose request line and header are over
// MaxHeaderBytes with a 431 problem.
func limitHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := headerBytes(r); n > MaxHeaderBytes {
			writeProblem(w, r, problem(http.StatusRequestHeaderFieldsTooLarge, CodeHeaderTooLarge,
				fmt.Sprintf("the request line and header are about %d bytes, over the limit of %d", n, MaxHeaderBytes)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headerBytes is the size of the request line and header as they came on
// the wire, near enough: "GET /path HTTP/1.1\r\n", "Name: value\r\n" per
// value, the Host line (net/http moves it into r.Host) and the blank line.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2
}
