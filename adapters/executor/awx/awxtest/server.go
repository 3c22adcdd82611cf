// Package awxtest is a local stand-in for the AWX REST API in tests. It
// implements the part of AWX's documented API (api/v2) that the AWX executor
// uses, with AWX's request and response shapes, and nothing else. It is not
// AWX: no playbook runs, a job stays pending until a test sets its status,
// and a passing test against it shows that Myriarch speaks the documented
// API, not that a real AWX accepts a particular job template.
//
// Served, as AWX documents them:
//   - GET  /api/v2/job_templates/{id}/launch/: the template's prompts
//     (ask_limit_on_launch, ask_variables_on_launch, ask_credential_on_launch,
//     passwords_needed_to_start, variables_needed_to_start, ...).
//   - POST /api/v2/job_templates/{id}/launch/: launches a job; 201 with
//     "job", "ignored_fields" and the job. Like AWX, a field the template does
//     not prompt for is not applied but listed in ignored_fields, and a missing
//     required survey variable is 400.
//   - GET  /api/v2/jobs/ with the filters job_template, limit, created__gt,
//     status, order_by (id, -id) and page_size; {"count", "results"}.
//   - GET  /api/v2/jobs/{id}/: the job with status, failed, job_explanation,
//     result_traceback, limit and extra_vars (JSON text).
//   - GET and POST /api/v2/jobs/{id}/cancel/: can_cancel; 202, or 405 for a
//     job that ended.
//
// Every request needs "Authorization: Bearer <token>" (401 otherwise). One
// deliberate difference: a launch body with a field AWX does not define is
// 400 here, where AWX's serializer would drop it silently, so that a
// misspelt field fails a test instead of being lost.
package awxtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Job statuses of AWX.
const (
	StatusPending    = "pending"
	StatusRunning    = "running"
	StatusSuccessful = "successful"
	StatusFailed     = "failed"
	StatusError      = "error"
	StatusCanceled   = "canceled"
)

// Template is a job template.
type Template struct {
	ID   int
	Name string
	// Prompt on launch, as AWX's ask_*_on_launch.
	AskLimit, AskVariables, AskCredential bool
	// Limit and ExtraVars are the template's own, used when a launch does
	// not (or may not) set them.
	Limit     string
	ExtraVars map[string]any
	// SurveyRequired are the survey's required variables
	// (variables_needed_to_start).
	SurveyRequired []string
	// Passwords are passwords_needed_to_start.
	Passwords []string
}

// Job is a launched job.
type Job struct {
	ID          int
	Template    int
	Status      string
	Limit       string
	ExtraVars   map[string]any
	Credentials []int
	Explanation string // job_explanation
	Traceback   string // result_traceback
	Created     time.Time
}

// Launch is one accepted launch as the client sent it.
type Launch struct {
	Template int
	Body     map[string]any // the decoded request body
	Job      int
	Ignored  []string // fields AWX did not apply (ignored_fields)
}

// Server is the fake AWX. Its methods may be called while it serves.
type Server struct {
	token string
	now   func() time.Time

	mu        sync.Mutex
	templates map[int]Template
	jobs      map[int]*Job
	nextID    int
	launches  []Launch
	requests  []string // "METHOD path" of every request
	failNext  []int    // statuses to answer the next requests with
}

// New is a fake AWX that accepts the Bearer token token; now stamps the
// jobs' creation (nil: time.Now).
func New(token string, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	return &Server{token: token, now: now, templates: map[int]Template{}, jobs: map[int]*Job{}, nextID: 100}
}

// AddTemplate adds (or replaces) a job template.
func (s *Server) AddTemplate(t Template) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.templates[t.ID] = t
}

// SetStatus sets a job's status and its job_explanation.
func (s *Server) SetStatus(id int, status, explanation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		j.Status, j.Explanation = status, explanation
	}
}

// SetTraceback sets a job's result_traceback.
func (s *Server) SetTraceback(id int, traceback string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		j.Traceback = traceback
	}
}

// FailNext makes the next n requests answer status (503, 429, ...) with
// Retry-After: 1 and do nothing else.
func (s *Server) FailNext(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failNext = append(s.failNext, status)
	}
}

// Launches returns the accepted launches in order.
func (s *Server) Launches() []Launch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.launches)
}

// Jobs returns every job, by id.
func (s *Server) Jobs() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Job, 0, len(s.jobs))
	for _, id := range slices.Sorted(maps.Keys(s.jobs)) {
		out = append(out, *s.jobs[id])
	}
	return out
}

// Job returns a job.
func (s *Server) Job(id int) (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// Requests returns "METHOD path" of every request received, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if len(s.failNext) > 0 {
		status := s.failNext[0]
		s.failNext = s.failNext[1:]
		w.Header().Set("Retry-After", "1")
		writeJSON(w, status, map[string]any{"detail": http.StatusText(status)})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.token || s.token == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Authentication credentials were not provided."})
		return
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v2/"), "/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/api/v2/") || !strings.HasSuffix(r.URL.Path, "/") {
		notFound(w)
		return
	}
	switch {
	case len(parts) == 3 && parts[0] == "job_templates" && parts[2] == "launch":
		s.templateLaunch(w, r, parts[1])
	case len(parts) == 1 && parts[0] == "jobs":
		s.jobList(w, r)
	case len(parts) == 2 && parts[0] == "jobs":
		s.jobDetail(w, r, parts[1])
	case len(parts) == 3 && parts[0] == "jobs" && parts[2] == "cancel":
		s.jobCancel(w, r, parts[1])
	default:
		notFound(w)
	}
}

func (s *Server) templateLaunch(w http.ResponseWriter, r *http.Request, idText string) {
	id, _ := strconv.Atoi(idText)
	t, ok := s.templates[id]
	if !ok {
		notFound(w)
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{
			"can_start_without_user_input": !t.AskLimit && !t.AskVariables && !t.AskCredential && len(t.SurveyRequired) == 0 && len(t.Passwords) == 0,
			"passwords_needed_to_start":    nonNil(t.Passwords),
			"ask_variables_on_launch":      t.AskVariables,
			"ask_limit_on_launch":          t.AskLimit,
			"ask_credential_on_launch":     t.AskCredential,
			"ask_inventory_on_launch":      false,
			"survey_enabled":               len(t.SurveyRequired) > 0,
			"variables_needed_to_start":    nonNil(t.SurveyRequired),
			"credential_needed_to_start":   false,
			"inventory_needed_to_start":    false,
			"job_template_data":            map[string]any{"name": t.Name, "id": t.ID, "description": ""},
			"defaults":                     map[string]any{"limit": t.Limit, "extra_vars": encodeVars(t.ExtraVars)},
		})
	case http.MethodPost:
		s.launch(w, r, t)
	default:
		methodNotAllowed(w, r)
	}
}

// launchFields are the fields AWX's launch accepts (JobLaunchSerializer).
var launchFields = map[string]bool{
	"extra_vars": true, "inventory": true, "credentials": true, "credential_passwords": true, "scm_branch": true,
	"diff_mode": true, "job_tags": true, "job_type": true, "skip_tags": true, "limit": true, "verbosity": true,
	"execution_environment": true, "labels": true, "forks": true, "job_slice_count": true, "timeout": true,
	"instance_groups": true,
}

func (s *Server) launch(w http.ResponseWriter, r *http.Request, t Template) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err.Error() != "EOF" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "JSON parse error - " + err.Error()})
		return
	}
	errs := map[string]any{}
	for k := range body {
		if !launchFields[k] {
			errs[k] = []string{"Unknown field (this fake refuses what AWX would drop)."}
		}
	}
	limit, limitOK := body["limit"].(string)
	if _, set := body["limit"]; set && !limitOK {
		errs["limit"] = []string{"Not a valid string."}
	}
	vars, varsErr := launchVars(body["extra_vars"])
	if varsErr != "" {
		errs["extra_vars"] = []string{varsErr}
	}
	creds, credsOK := intList(body["credentials"])
	if _, set := body["credentials"]; set && !credsOK {
		errs["credentials"] = []string{"Incorrect type. Expected pk value."}
	}
	var ignored []string
	job := &Job{Template: t.ID, Status: StatusPending, Limit: t.Limit, ExtraVars: maps.Clone(t.ExtraVars), Created: s.now().UTC()}
	if job.ExtraVars == nil {
		job.ExtraVars = map[string]any{}
	}
	if _, set := body["limit"]; set && limit != t.Limit {
		if t.AskLimit {
			job.Limit = limit
		} else {
			ignored = append(ignored, "limit")
		}
	}
	if len(vars) > 0 {
		if t.AskVariables {
			maps.Copy(job.ExtraVars, vars)
		} else {
			ignored = append(ignored, "extra_vars")
		}
	}
	if len(creds) > 0 {
		if t.AskCredential {
			job.Credentials = creds
		} else {
			ignored = append(ignored, "credentials")
		}
	}
	var missing []string
	for _, v := range t.SurveyRequired {
		if _, ok := job.ExtraVars[v]; !ok {
			missing = append(missing, fmt.Sprintf("'%s' value missing", v))
		}
	}
	if len(missing) > 0 {
		errs["variables_needed_to_start"] = missing
	}
	if len(t.Passwords) > 0 {
		errs["passwords_needed_to_start"] = t.Passwords
	}
	if len(errs) > 0 {
		writeJSON(w, http.StatusBadRequest, errs)
		return
	}
	s.nextID++
	job.ID = s.nextID
	s.jobs[job.ID] = job
	ignoredFields := map[string]any{}
	for _, f := range ignored {
		ignoredFields[f] = body[f]
	}
	s.launches = append(s.launches, Launch{Template: t.ID, Body: body, Job: job.ID, Ignored: ignored})
	out := s.jobJSON(job)
	out["job"] = job.ID
	out["ignored_fields"] = ignoredFields
	w.Header().Set("Location", fmt.Sprintf("/api/v2/jobs/%d/", job.ID))
	writeJSON(w, http.StatusCreated, out)
}

// launchVars decodes extra_vars, which AWX takes as an object or as JSON text.
func launchVars(v any) (map[string]any, string) {
	switch x := v.(type) {
	case nil:
		return nil, ""
	case map[string]any:
		return x, ""
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, ""
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(x), &m); err != nil {
			return nil, "Cannot parse as JSON (error: " + err.Error() + ")."
		}
		return m, ""
	}
	return nil, "Must be a valid JSON or YAML dictionary."
}

func intList(v any) ([]int, bool) {
	if v == nil {
		return nil, true
	}
	xs, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(xs))
	for _, x := range xs {
		f, ok := x.(float64)
		if !ok || f != float64(int(f)) {
			return nil, false
		}
		out = append(out, int(f))
	}
	return out, true
}

// jobFilters are the query parameters the job list understands.
var jobFilters = map[string]bool{"job_template": true, "limit": true, "created__gt": true, "status": true, "order_by": true, "page_size": true, "page": true}

func (s *Server) jobList(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, r)
		return
	}
	q := r.URL.Query()
	for k := range q {
		switch {
		case strings.HasPrefix(k, "extra_vars"): // AWX's prevent_search
			writeJSON(w, http.StatusForbidden, map[string]any{"detail": "Filtering on extra_vars is not allowed."})
			return
		case !jobFilters[k]:
			writeJSON(w, http.StatusBadRequest, map[string]any{"detail": fmt.Sprintf("this fake does not filter on %s", k)})
			return
		}
	}
	var since time.Time
	if v := q.Get("created__gt"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"detail": fmt.Sprintf("%q is not a date and time", v)})
			return
		}
		since = t
	}
	ids := slices.Sorted(maps.Keys(s.jobs))
	if q.Get("order_by") == "-id" {
		slices.Reverse(ids)
	}
	results := []map[string]any{}
	for _, id := range ids {
		j := s.jobs[id]
		switch {
		case q.Has("job_template") && q.Get("job_template") != strconv.Itoa(j.Template),
			q.Has("limit") && q.Get("limit") != j.Limit,
			q.Has("status") && q.Get("status") != j.Status,
			!since.IsZero() && !j.Created.After(since):
			continue
		}
		results = append(results, s.jobJSON(j))
	}
	count := len(results)
	if n, err := strconv.Atoi(q.Get("page_size")); err == nil && n > 0 && n < len(results) {
		results = results[:n]
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": count, "next": nil, "previous": nil, "results": results})
}

func (s *Server) jobDetail(w http.ResponseWriter, r *http.Request, idText string) {
	j := s.job(idText)
	switch {
	case j == nil:
		notFound(w)
	case r.Method != http.MethodGet:
		methodNotAllowed(w, r)
	default:
		writeJSON(w, http.StatusOK, s.jobJSON(j))
	}
}

func (s *Server) jobCancel(w http.ResponseWriter, r *http.Request, idText string) {
	j := s.job(idText)
	if j == nil {
		notFound(w)
		return
	}
	active := j.Status == "new" || j.Status == StatusPending || j.Status == "waiting" || j.Status == StatusRunning
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"can_cancel": active})
	case http.MethodPost:
		if !active {
			methodNotAllowed(w, r)
			return
		}
		j.Status = StatusCanceled
		w.WriteHeader(http.StatusAccepted)
	default:
		methodNotAllowed(w, r)
	}
}

func (s *Server) job(idText string) *Job {
	id, err := strconv.Atoi(idText)
	if err != nil {
		return nil
	}
	return s.jobs[id]
}

// jobJSON is a job as AWX shows it (a subset of its fields).
func (s *Server) jobJSON(j *Job) map[string]any {
	t := s.templates[j.Template]
	finished := j.Status == StatusSuccessful || j.Status == StatusFailed || j.Status == StatusError || j.Status == StatusCanceled
	return map[string]any{
		"id": j.ID, "type": "job", "url": fmt.Sprintf("/api/v2/jobs/%d/", j.ID), "name": t.Name,
		"created": j.Created.Format(time.RFC3339Nano), "job_template": j.Template, "unified_job_template": j.Template,
		"launch_type": "manual", "status": j.Status, "failed": j.Status == StatusFailed || j.Status == StatusError,
		"finished": finished, "limit": j.Limit, "extra_vars": encodeVars(j.ExtraVars), "credentials": nonNil(j.Credentials),
		"job_explanation": j.Explanation, "result_traceback": j.Traceback,
	}
}

func encodeVars(v map[string]any) string {
	if len(v) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not found."})
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": fmt.Sprintf("Method \"%s\" not allowed.", r.Method)})
}
