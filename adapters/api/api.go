// Package api is the REST API of api/openapi.yaml as one http.Handler: the
// same handler serves on localhost and, wrapped by the API Gateway proxy
// adapter, in the api Lambda. It authenticates bearer tokens (or trusts the
// principal of an API Gateway authorizer), checks permissions, decodes
// bodies strictly, and hands every decision to the core: engine actions
// through the engine task's Evaluator, version selection through
// core/selection, revisions through core/revision, planning through the
// planner. Refusals are application/problem+json with a stable code. The
// same handler serves the operators' web page under /ui/ (adapters/ui), which
// needs no token: the page asks for one and calls the API with it.
package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/adapters/ui"
	apidoc "github.com/myriarch/myriarch/api"
	"github.com/myriarch/myriarch/core/agent"
)

// DefaultPlanTimeout is how long select-version, clear-version-selection
// and applyRevision wait for the planner (spec: up to 10 seconds).
const DefaultPlanTimeout = 10 * time.Second

// DefaultAssignTimeout is how long applyRevision sweeps the agents into
// their fleets before it plans; the planner's minute continues a sweep left
// unfinished. With DefaultPlanTimeout it leaves room within API Gateway's
// 29 s for storing the revision.
const DefaultAssignTimeout = 8 * time.Second

// Deps are what the API is built from.
type Deps struct {
	Store    Store
	Actions  RolloutActor      // enginetask.Evaluator over the same store
	SFN      execution.TaskAPI // wakes parked executions (SendTaskSuccess)
	Planning Planning
	// Catalog is the configured releases (StaticCatalog from
	// MYRIARCH_RELEASES), merged into the catalogue stored per distribution
	// with source config; nil configures none.
	Catalog ReleaseCatalog
	Auth    Authenticator
	// Names shows actors as display names; nil uses Auth when it is a
	// Directory, else shows the references.
	Names Directory
	// Trusted, when set, returns the principal an API Gateway authorizer
	// established; requests without one fall back to the bearer token.
	Trusted     TrustedPrincipal
	Clock       func() time.Time
	NewID       func() string // request ids (X-Request-Id, logs)
	Log         *slog.Logger
	PlanTimeout time.Duration // 0: DefaultPlanTimeout
	// AssignTimeout bounds the assignment sweep of applyRevision (0:
	// DefaultAssignTimeout; negative: none, the planner's minute sweeps).
	AssignTimeout time.Duration
	// Liveness is the rule by which rollouts judge agents, which the
	// inventory shows (online, gone); the zero value trusts the stored
	// connection state and calls no agent gone.
	Liveness agent.Liveness
	// ServerTimezone is MYRIARCH_DEFAULT_TIMEZONE ("" = UTC), as the engine
	// has it: the predictions evaluate maintenance windows with it.
	ServerTimezone string
}

// server holds the dependencies of the handlers.
type server struct {
	Deps
}

// New builds the handler. Every dependency but Catalog, Names, Trusted, Log,
// PlanTimeout, AssignTimeout, Liveness and ServerTimezone is required.
func New(d Deps) (http.Handler, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if d.Names == nil {
		d.Names = actorsAsNames{}
		if dir, ok := d.Auth.(Directory); ok {
			d.Names = dir
		}
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.PlanTimeout <= 0 {
		d.PlanTimeout = DefaultPlanTimeout
	}
	switch {
	case d.AssignTimeout == 0:
		d.AssignTimeout = DefaultAssignTimeout
	case d.AssignTimeout < 0:
		d.AssignTimeout = 0
	}
	page, err := ui.New()
	if err != nil {
		return nil, err
	}
	s := &server{Deps: d}
	return s.routes(page), nil
}

func (d Deps) check() error {
	missing := map[string]bool{
		"Store": d.Store == nil, "Actions": d.Actions == nil, "SFN": d.SFN == nil, "Planning": d.Planning == nil,
		"Auth": d.Auth == nil, "Clock": d.Clock == nil, "NewID": d.NewID == nil,
	}
	for _, name := range []string{"Store", "Actions", "SFN", "Planning", "Auth", "Clock", "NewID"} {
		if missing[name] {
			return errors.New("api: dependency " + name + " is missing")
		}
	}
	return nil
}

type actorsAsNames struct{}

func (actorsAsNames) DisplayName(actor string) string { return actor }

// routes is the table of operations of api/openapi.yaml, and the page.
func (s *server) routes(page http.Handler) http.Handler {
	r := chi.NewRouter()
	r.Use(s.requestID, s.recoverPanics, middleware.GetHead) // HEAD wherever GET is
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, problem(http.StatusNotFound, CodeNotFound, "no operation at "+r.URL.Path))
	})
	r.MethodNotAllowed(methodNotAllowed(r))
	r.Get("/api/v1/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(apidoc.OpenAPI)
	})
	r.Handle("/ui", page) // outside /api/v1: the page itself needs no token
	r.Handle("/ui/*", page)
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(limitHeaders, s.authenticate)
		r.Get("/me", s.handle(PermRead, s.getMe))
		r.Get("/rollouts", s.handle(PermRead, s.listRollouts))
		r.Get("/rollouts/{id}", s.handle(PermRead, s.getRollout))
		r.Get("/rollouts/{id}/targets", s.handle(PermRead, s.listRolloutTargets))
		r.Post("/rollouts/{id}/actions/{action}", s.handle(PermOperate, s.rolloutAction))
		r.Get("/fleets", s.handle(PermRead, s.listFleets))
		r.Get("/fleets/{name}", s.handle(PermRead, s.getFleet))
		r.Get("/fleets/{name}/version-options", s.handle(PermRead, s.getFleetVersionOptions))
		r.Post("/fleets/{name}/actions/select-version", s.handle(PermSetVersion, s.selectFleetVersion))
		r.Post("/fleets/{name}/actions/clear-version-selection", s.handle(PermSetVersion, s.clearFleetVersionSelection))
		// agents
		r.Get("/agents", s.handle(PermRead, s.listAgents))
		r.Get("/agents/{id}", s.handle(PermRead, s.getAgent))
		r.Post("/agents/{id}/actions/reset-credential", s.handle(PermResetCredential, s.resetAgentCredential))
		r.Post("/agents/{id}/actions/rotate-credential", s.handle(PermResetCredential, s.rotateAgentCredential))
		r.Get("/audit", s.handle(PermRead, s.listAudit))
		r.Get("/events", s.handle(PermRead, s.listEvents))
		r.Post("/revisions", s.handle(PermApplyRevisions, s.applyRevision))
		r.Post("/revisions/validate", s.handle(PermRead, s.validateRevision))
		r.Get("/revisions/current", s.handle(PermRead, s.getCurrentRevision))
		r.Post("/plans", s.handle(PermRead, s.createPlan))

		// releases and install plans
		r.Get("/releases", s.handle(PermRead, s.listReleases))
		r.Get("/releases/summary", s.handle(PermRead, s.getReleaseSummary))
		r.Get("/releases/{distribution}/latest/fleets", s.handle(PermRead, s.getLatestReleaseFleets))
		r.Get("/releases/{distribution}/{version}", s.handle(PermRead, s.getRelease))
		r.Put("/releases/{distribution}/{version}", s.handle(PermManageReleases, s.putRelease))
		r.Delete("/releases/{distribution}/{version}", s.handle(PermManageReleases, s.deleteRelease))
		r.Get("/fleets/{name}/install-plan", s.handle(PermRead, s.getFleetInstallPlan))
	})
	return r
}

// operation is a handler that answers with a value or returns a problem;
// any other error is a 500 whose detail reveals nothing.
type operation func(w http.ResponseWriter, r *http.Request, p Principal) (status int, body any, err error)

// handle checks the permission, then the ids and names in the path
// (checkPath), runs the operation and writes its answer. The permission
// comes first so that an impossible id tells a caller without the
// permission no more than an unknown one does.
func (s *server) handle(need Permission, op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r)
		if !p.Role.Can(need) {
			pr := problem(http.StatusForbidden, CodeForbidden, "the role "+string(p.Role)+" lacks the permission "+string(need))
			pr.Permission = need
			writeProblem(w, r, pr)
			return
		}
		if pr := checkPath(r); pr != nil {
			writeProblem(w, r, pr)
			return
		}
		status, body, err := op(w, r, p)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if status == http.StatusNoContent { // deleteRelease: no body, so no content type either
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, body)
	}
}

// fail answers a returned error: a Problem as it is, anything else as 500.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var p *Problem
	if errors.As(err, &p) {
		writeProblem(w, r, p)
		return
	}
	s.Log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path,
		"requestId", w.Header().Get("X-Request-Id"), "error", err.Error())
	writeProblem(w, r, problem(http.StatusInternalServerError, CodeInternal, "the server failed to answer; the request id is in the logs"))
}
