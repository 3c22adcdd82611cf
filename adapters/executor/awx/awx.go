// Package awx is the AWX executor: a version update of a target is a job
// launched from a job template of AWX or Ansible Automation Platform through
// its REST API (api/v2), limited to the target's host and told the version
// in its extra vars. Cancel cancels the job; Failed (the executor.Watcher)
// reports a job that failed, so that the engine fails the target with the
// job's status. Success is never the job's to say: the target succeeds when
// the collector reports the new version.
//
// Calls follow AWX's documented API: POST job_templates/{id}/launch/ (and
// GET of it to check the template's prompts), GET jobs/ and jobs/{id}/,
// POST jobs/{id}/cancel/, with an OAuth2 token as a Bearer token.
package awx

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/httpcall"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/rollout"
)

// RefPrefix starts the external reference of a target started through AWX:
// awx-job:<job id>.
const RefPrefix = "awx-job:"

// Ref is the external reference of AWX job id.
func Ref(id int) string { return RefPrefix + strconv.Itoa(id) }

// JobID is the job an external reference names; false for a reference that
// is not an AWX job's (none, or another executor's).
func JobID(ref string) (int, bool) {
	s, ok := strings.CutPrefix(ref, RefPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(s)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// Extra vars Myriarch adds to every launch; an object's extraVars may not
// set them.
const (
	// VarDeliveryID is executor.DeliveryID of the call: the same on every
	// repeat of a Start, so that a playbook can tell a repeat from a new
	// update, and Start finds the job it launched before.
	VarDeliveryID = "myriarch_delivery_id"
	VarVersion    = "myriarch_version"   // the version to install
	VarOperation  = "myriarch_operation" // start, or reset for a rollback
	VarRollout    = "myriarch_rollout"   // the rollout's id
	VarAgent      = "myriarch_agent"     // the target's agent id
	VarAttempt    = "myriarch_attempt"   // the target's attempt, 1 and up (a number)
	reservedVar   = "myriarch_"
)

// Job statuses of AWX. A job ends successful, failed, error or canceled.
const (
	StatusNew        = "new"
	StatusPending    = "pending"
	StatusWaiting    = "waiting"
	StatusRunning    = "running"
	StatusSuccessful = "successful"
	StatusFailed     = "failed"
	StatusError      = "error"
	StatusCanceled   = "canceled"
)

// failedStatuses are the ends of a job that fail its target.
var failedStatuses = []string{StatusFailed, StatusError, StatusCanceled}

// DefaultLimit is the job's host limit when the object sets none.
const DefaultLimit = "{host}"

// DefaultHostAttribute is the agent attribute that names the host in the
// AWX inventory when the object sets none.
const DefaultHostAttribute = "host.name"

// dedupWindow is how far back Start looks for a job it launched before:
// repeats of a Start come from Step Functions retrying the engine's task
// and from lost races re-running a pass, within minutes.
const dedupWindow = time.Hour

// dedupPage bounds the jobs of the host Start looks at, newest first.
const dedupPage = 20

// Executor launches AWX jobs. One Executor serves every AWX executor object:
// each call reads the object from the rollout's snapshot. Its methods may
// run concurrently.
type Executor struct {
	HTTP    *http.Client     // nil: a client without a timeout of its own (each request has the object's)
	Secrets executor.Secrets // reads the token credentialRef names
	Now     func() time.Time // the wall clock (required: AWX stamps jobs with its own)
	// Sleep waits between retries; nil: a timer that ends early with ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger // nil: slog.Default()
}

var (
	_ executor.Executor = Executor{}
	_ executor.Watcher  = Executor{}
)

// Validate checks the rollout's AWX object, reads its token and asks AWX
// whether the job template prompts on launch for what Start sends: a limit
// and variables (a template that does not would run the job on its whole
// inventory without the version, since AWX ignores fields it does not
// prompt for), credentials when the object names some, and no passwords.
func (e Executor) Validate(ctx context.Context, r rollout.Rollout) error {
	if e.Now == nil {
		return errors.New("AWX executor: no clock configured")
	}
	c, err := e.client(ctx, r)
	if err != nil {
		return err
	}
	var info launchInfo
	path := fmt.Sprintf("/job_templates/%d/launch/", c.o.JobTemplateID)
	if err := c.retry(ctx, "read the launch settings of job template "+strconv.Itoa(c.o.JobTemplateID), func() error {
		return c.do(ctx, http.MethodGet, path, nil, nil, &info)
	}); err != nil {
		return err
	}
	return info.check(c.o)
}

// launchInfo is the answer to GET job_templates/{id}/launch/.
type launchInfo struct {
	AskLimit        bool     `json:"ask_limit_on_launch"`
	AskVariables    bool     `json:"ask_variables_on_launch"`
	AskCredential   bool     `json:"ask_credential_on_launch"`
	Passwords       []string `json:"passwords_needed_to_start"`
	Variables       []string `json:"variables_needed_to_start"`
	InventoryNeeded bool     `json:"inventory_needed_to_start"`
}

func (info launchInfo) check(o executorobject.AWX) error {
	var problems []string
	if !info.AskLimit {
		problems = append(problems, "enable Prompt on launch for Limit (ask_limit_on_launch)")
	}
	if !info.AskVariables {
		problems = append(problems, "enable Prompt on launch for Variables (ask_variables_on_launch)")
	}
	if len(o.Credentials) > 0 && !info.AskCredential {
		problems = append(problems, "enable Prompt on launch for Credentials (ask_credential_on_launch) or remove awx.credentials")
	}
	if len(info.Passwords) > 0 {
		problems = append(problems, fmt.Sprintf("use credentials that ask for no password on launch (it needs %s)", strings.Join(info.Passwords, ", ")))
	}
	if info.InventoryNeeded {
		problems = append(problems, "give it an inventory")
	}
	sent := sentVars(o)
	for _, v := range info.Variables {
		if !sent[v] {
			problems = append(problems, fmt.Sprintf("its survey requires %s: set it in awx.extraVars", v))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("AWX job template %d cannot be launched by Myriarch: %s", o.JobTemplateID, strings.Join(problems, "; "))
}

// sentVars are the extra vars every launch sends.
func sentVars(o executorobject.AWX) map[string]bool {
	sent := map[string]bool{VarDeliveryID: true, VarVersion: true, VarOperation: true, VarRollout: true, VarAgent: true, VarAttempt: true}
	for k := range o.ExtraVars {
		sent[k] = true
	}
	return sent
}

// Start launches the job template for the target's host, unless a job of
// the same delivery was launched before: then it is that job (see findJob).
// A template that ignored the limit, the variables or the credentials is a
// misconfiguration: the job it launched is canceled at once.
func (e Executor) Start(ctx context.Context, call executor.Call) (string, error) {
	c, err := e.client(ctx, call.Rollout)
	if err != nil {
		return "", err
	}
	req, err := c.launchRequest(call)
	if err != nil {
		return "", err
	}
	var id int
	err = c.retry(ctx, "launch AWX job template "+strconv.Itoa(c.o.JobTemplateID), func() error {
		found, err := c.findJob(ctx, req)
		if err != nil || found > 0 {
			id = found
			return err
		}
		id, err = c.launch(ctx, req)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("start %s of agent %s: %w", call.Version, call.Target.AgentID, err)
	}
	return Ref(id), nil
}

// launchRequest is the body of POST job_templates/{id}/launch/.
type launchRequest struct {
	Limit       string         `json:"limit"`
	ExtraVars   map[string]any `json:"extra_vars"`
	Credentials []int          `json:"credentials,omitempty"`
	deliveryID  string         // ExtraVars[VarDeliveryID]
}

func (c *client) launchRequest(call executor.Call) (launchRequest, error) {
	v := newVars(c.o, call)
	limit, err := v.render(cmp.Or(c.o.Limit, DefaultLimit))
	if err != nil {
		return launchRequest{}, err
	}
	if strings.TrimSpace(limit) == "" {
		// an empty limit is the whole inventory
		return launchRequest{}, fmt.Errorf("awx.limit %q is empty for agent %s: it would run the job on the whole inventory", c.o.Limit, call.Target.AgentID)
	}
	ev := make(map[string]any, len(c.o.ExtraVars)+6)
	for k, val := range c.o.ExtraVars {
		if ev[k], err = v.renderValue(val); err != nil {
			return launchRequest{}, fmt.Errorf("awx.extraVars.%s: %w", k, err)
		}
	}
	delivery := executor.DeliveryID(call.Rollout.ID, call.Target.AgentID, call.Target.Attempt, call.Operation)
	ev[VarDeliveryID] = delivery
	ev[VarVersion] = call.Version
	ev[VarOperation] = call.Operation
	ev[VarRollout] = call.Rollout.ID
	ev[VarAgent] = call.Target.AgentID
	ev[VarAttempt] = call.Target.Attempt
	return launchRequest{Limit: limit, ExtraVars: ev, Credentials: c.o.Credentials, deliveryID: delivery}, nil
}

// job is what Myriarch reads of an AWX job (GET jobs/{id}/, an entry of GET jobs/).
type job struct {
	ID              int    `json:"id"`
	Status          string `json:"status"`
	Limit           string `json:"limit"`
	ExtraVars       string `json:"extra_vars"` // JSON text
	JobExplanation  string `json:"job_explanation"`
	ResultTraceback string `json:"result_traceback"`
}

// deliveryID is the myriarch_delivery_id of the job's extra vars, if any.
func (j job) deliveryID() string {
	var ev map[string]any
	if err := json.Unmarshal([]byte(j.ExtraVars), &ev); err != nil {
		return ""
	}
	s, _ := ev[VarDeliveryID].(string)
	return s
}

// findJob returns the job of the template launched for the same delivery
// within dedupWindow, or 0. AWX refuses filters on extra_vars, so it lists
// the template's recent jobs of the same limit (GET jobs/?job_template=
// &limit=&created__gt=) and compares their myriarch_delivery_id. A repeated
// Start (Start is at-least-once) thus finds the job instead of launching a
// second one on the same host. It cannot find a job AWX has not recorded
// yet, so two Starts at the same moment may still launch twice: playbooks
// must be idempotent, and myriarch_delivery_id lets them tell.
func (c *client) findJob(ctx context.Context, req launchRequest) (int, error) {
	q := url.Values{
		"job_template": {strconv.Itoa(c.o.JobTemplateID)},
		"limit":        {req.Limit},
		"created__gt":  {c.e.now().Add(-dedupWindow).UTC().Format(time.RFC3339)},
		"order_by":     {"-id"},
		"page_size":    {strconv.Itoa(dedupPage)},
	}
	var page struct {
		Results []job `json:"results"`
	}
	if err := c.do(ctx, http.MethodGet, "/jobs/", q, nil, &page); err != nil {
		return 0, fmt.Errorf("look for a job launched before: %w", err)
	}
	for _, j := range page.Results {
		if j.deliveryID() == req.deliveryID {
			return j.ID, nil
		}
	}
	return 0, nil
}

// launchResponse is what Myriarch reads of the answer to a launch (201).
type launchResponse struct {
	Job           int            `json:"job"`
	ID            int            `json:"id"`
	IgnoredFields map[string]any `json:"ignored_fields"`
}

func (c *client) launch(ctx context.Context, req launchRequest) (int, error) {
	var resp launchResponse
	if err := c.do(ctx, http.MethodPost, fmt.Sprintf("/job_templates/%d/launch/", c.o.JobTemplateID), nil, req, &resp); err != nil {
		return 0, err
	}
	id := cmp.Or(resp.Job, resp.ID)
	if id <= 0 {
		return 0, fmt.Errorf("AWX accepted the launch of job template %d but named no job", c.o.JobTemplateID)
	}
	ignored := slices.Sorted(maps.Keys(resp.IgnoredFields))
	if len(ignored) == 0 {
		return id, nil
	}
	// the job runs without them: on the whole inventory, without the version
	cerr := c.cancel(ctx, id)
	msg := fmt.Sprintf("AWX job template %d ignored %s on launch (enable Prompt on launch for them); job %d", c.o.JobTemplateID, strings.Join(ignored, ", "), id)
	if cerr != nil {
		return 0, fmt.Errorf("%s could not be canceled: %v", msg, cerr)
	}
	return 0, fmt.Errorf("%s was canceled", msg)
}

// Cancel cancels the job of the target's external reference. No reference
// (nothing was launched) and a job that already ended (AWX answers 405) or
// no longer exists are no error.
func (e Executor) Cancel(ctx context.Context, call executor.Call) error {
	id, ok := JobID(call.Target.ExternalRef)
	if !ok {
		return nil
	}
	c, err := e.client(ctx, call.Rollout)
	if err != nil {
		return err
	}
	return c.retry(ctx, "cancel AWX job "+strconv.Itoa(id), func() error { return c.cancel(ctx, id) })
}

func (c *client) cancel(ctx context.Context, id int) error {
	var resp struct {
		CanCancel *bool `json:"can_cancel"`
	}
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/jobs/%d/cancel/", id), nil, nil, &resp)
	var se *APIError
	switch {
	case errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed:
		c.e.logger().Debug("AWX job already ended, nothing to cancel", "job", id)
		return nil
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		c.e.logger().Info("AWX job not found, nothing to cancel", "job", id)
		return nil
	}
	return err
}

// Failed reports whether the target's job ended failed, error or canceled,
// with the reason "AWX job 42 failed (status failed): <explanation>". A job
// still new, pending, waiting or running, or successful, has not failed:
// success is what the collector reports. It makes one request without
// retries, since the engine asks again at its next pass.
func (e Executor) Failed(ctx context.Context, call executor.Call) (reason string, failed bool, err error) {
	id, ok := JobID(call.Target.ExternalRef)
	if !ok {
		return "", false, nil
	}
	c, err := e.client(ctx, call.Rollout)
	if err != nil {
		return "", false, err
	}
	var j job
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/jobs/%d/", id), nil, nil, &j); err != nil {
		return "", false, fmt.Errorf("read AWX job %d of agent %s: %w", id, call.Target.AgentID, err)
	}
	if !slices.Contains(failedStatuses, j.Status) {
		return "", false, nil
	}
	reason = fmt.Sprintf("AWX job %d failed (status %s)", id, j.Status)
	if d := j.detail(); d != "" {
		reason += ": " + d
	}
	return reason, true, nil
}

// detail is why a job failed as AWX says it: its explanation, else the end
// of its traceback (where the error is).
func (j job) detail() string {
	if s := strings.TrimSpace(j.JobExplanation); s != "" {
		return excerpt(s, excerptChars)
	}
	tb := []rune(strings.Join(strings.Fields(j.ResultTraceback), " "))
	if len(tb) > excerptChars {
		return "…" + string(tb[len(tb)-excerptChars:])
	}
	return string(tb)
}

// client resolves the rollout's AWX object and its token.
func (e Executor) client(ctx context.Context, r rollout.Rollout) (*client, error) {
	o, err := object(r)
	if err != nil {
		return nil, err
	}
	root, err := apiRoot(o.URL)
	if err != nil {
		return nil, err
	}
	if e.Secrets == nil {
		return nil, fmt.Errorf("AWX executor %s: no secrets source configured for credentialRef %s", r.ExecutorObject.Name, o.CredentialRef)
	}
	token, err := e.Secrets.Secret(ctx, o.CredentialRef)
	if err != nil {
		return nil, fmt.Errorf("AWX executor %s: read the token %s: %w", r.ExecutorObject.Name, o.CredentialRef, err)
	}
	if token = strings.TrimSpace(token); token == "" {
		return nil, fmt.Errorf("AWX executor %s: the token %s is empty", r.ExecutorObject.Name, o.CredentialRef)
	}
	return &client{e: e, o: o, root: root, token: token}, nil
}

// object is the rollout's AWX object, checked for what every call needs.
func object(r rollout.Rollout) (executorobject.AWX, error) {
	eo := r.ExecutorObject
	if eo == nil || eo.AWX == nil {
		return executorobject.AWX{}, fmt.Errorf("rollout %s has no AWX executor object (fleet update.executorRef)", r.ID)
	}
	o := *eo.AWX
	var problems []string
	if o.URL == "" {
		problems = append(problems, "awx.url is required")
	}
	if o.JobTemplateID <= 0 {
		problems = append(problems, "awx.jobTemplateId must be a job template's id")
	}
	if o.CredentialRef == "" {
		problems = append(problems, "awx.credentialRef must name the token's secret")
	}
	for _, k := range slices.Sorted(maps.Keys(o.ExtraVars)) {
		if strings.HasPrefix(k, reservedVar) {
			problems = append(problems, fmt.Sprintf("awx.extraVars.%s: names starting with %s are Myriarch's", k, reservedVar))
		}
	}
	if len(problems) > 0 {
		return executorobject.AWX{}, fmt.Errorf("AWX executor %s: %s", eo.Name, strings.Join(problems, "; "))
	}
	return o, nil
}

// now is the wall clock the deployment injects; without one the look-up of
// earlier launches has no window to read, so Validate refuses the executor.
func (e Executor) now() time.Time {
	if e.Now == nil {
		return time.Time{}
	}
	return e.Now()
}

func (e Executor) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	return httpcall.Wait(ctx, d)
}

func (e Executor) httpClient() *http.Client {
	if e.HTTP == nil {
		return http.DefaultClient
	}
	return e.HTTP
}

func (e Executor) logger() *slog.Logger {
	if e.Log == nil {
		return slog.Default()
	}
	return e.Log
}
