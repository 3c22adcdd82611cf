package api

import (
	"context"
	"errors"
	"net/http"
	"runtime/debug"
)

type principalKey struct{}

func principalOf(r *http.Request) Principal {
	p, _ := r.Context().Value(principalKey{}).(Principal)
	return p
}

// authenticate establishes the principal: the one an API Gateway authorizer
// passed on when Trusted is set and finds one, else the bearer token's.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Trusted != nil {
			if p, ok := s.Trusted(r); ok {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
				return
			}
		}
		token := bearer(r.Header.Get("Authorization"))
		if token == "" {
			writeProblem(w, r, problem(http.StatusUnauthorized, CodeUnauthenticated, "send a token as Authorization: Bearer <token>"))
			return
		}
		p, err := s.Auth.Authenticate(token)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				s.Log.ErrorContext(r.Context(), "authentication failed", "error", err.Error())
			}
			writeProblem(w, r, problem(http.StatusUnauthorized, CodeUnauthenticated, "the token is not known"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// requestID names the request in the answer and the logs.
func (s *server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", s.NewID())
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic into a 500 problem: the stack goes to the
// log, never to the client.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.Log.ErrorContext(r.Context(), "panic", "method", r.Method, "path", r.URL.Path,
				"requestId", w.Header().Get("X-Request-Id"), "panic", v, "stack", string(debug.Stack()))
			writeProblem(w, r, problem(http.StatusInternalServerError, CodeInternal, "the server failed to answer; the request id is in the logs"))
		}()
		next.ServeHTTP(w, r)
	})
}
