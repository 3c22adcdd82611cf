package awx_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/awx"
	"github.com/myriarch/myriarch/adapters/executor/awx/awxtest"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/rollout"
)

const token = "awx-token"

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

type secrets map[string]string

func (s secrets) Secret(_ context.Context, name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s not found", name)
}

// fixture is a fake AWX with job template 7 prompting for everything
// Myriarch sends, and an executor on a fake clock whose sleeps advance it.
type fixture struct {
	t      *testing.T
	srv    *awxtest.Server
	url    string
	ex     awx.Executor
	now    time.Time
	sleeps []time.Duration
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, now: t0}
	f.srv = awxtest.New(token, func() time.Time { return f.now })
	f.srv.AddTemplate(awxtest.Template{ID: 7, Name: "upgrade otelcol", AskLimit: true, AskVariables: true, AskCredential: true})
	hs := httptest.NewServer(f.srv)
	t.Cleanup(hs.Close)
	f.url = hs.URL
	f.ex = awx.Executor{HTTP: hs.Client(), Secrets: secrets{"awx/token": token, "awx/wrong": "nope"}, Log: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return f.now },
		Sleep: func(_ context.Context, d time.Duration) error {
			f.sleeps = append(f.sleeps, d)
			f.now = f.now.Add(d)
			return nil
		}}
	return f
}

func (f *fixture) object(edit func(*executorobject.AWX)) *executorobject.Object {
	o := &executorobject.AWX{URL: f.url, JobTemplateID: 7, CredentialRef: "awx/token"}
	if edit != nil {
		edit(o)
	}
	return &executorobject.Object{Name: "awx-prod", Type: executorobject.TypeAWX, AWX: o}
}

func (f *fixture) call(edit func(*executorobject.AWX)) executor.Call {
	return executor.Call{
		Rollout: rollout.Rollout{ID: "r-1", Fleet: "edge", Executor: executorobject.TypeAWX, ExecutorObject: f.object(edit)},
		Target:  rollout.Target{RolloutID: "r-1", AgentID: "a00", Attempt: 1, FromRef: "0.160.0", ToRef: "0.161.0"},
		Agent:   agent.Agent{ID: "a00", Attributes: map[string]string{"host.name": "edge-1.example.com", "labels.dc": "fra"}},
		Version: "0.161.0", Operation: executor.OpStart,
	}
}

// start starts c and returns the job's reference.
func (f *fixture) start(c executor.Call) string {
	f.t.Helper()
	ref, err := f.ex.Start(context.Background(), c)
	if err != nil {
		f.t.Fatal(err)
	}
	return ref
}

func TestStart_LaunchesTheTemplateForTheHost(t *testing.T) {
	f := newFixture(t)
	c := f.call(func(o *executorobject.AWX) {
		o.Credentials = []int{3}
		o.ExtraVars = map[string]any{
			"otelcol_version": "{version}", "previous": "{from}", "target": "{host}/{agent}", "fleet": "{fleet}",
			"rollout": "{rollout}", "try": "{attempt}", "op": "{operation}", "forks": 5,
			"nested": map[string]any{"list": []any{"v{version}", true}},
		}
	})
	ref := f.start(c)
	launches := f.srv.Launches()
	if len(launches) != 1 {
		t.Fatalf("launches %+v, want one", launches)
	}
	l := launches[0]
	if ref != awx.Ref(l.Job) || ref != "awx-job:101" {
		t.Fatalf("ref %q, want awx-job:%d", ref, l.Job)
	}
	if l.Template != 7 || l.Body["limit"] != "edge-1.example.com" || !reflect.DeepEqual(l.Body["credentials"], []any{3.0}) || len(l.Ignored) > 0 {
		t.Fatalf("launch %+v: template 7, limit the host, credentials [3], nothing ignored", l)
	}
	want := map[string]any{
		"otelcol_version": "0.161.0", "previous": "0.160.0", "target": "edge-1.example.com/a00", "fleet": "edge",
		"rollout": "r-1", "try": "1", "op": "start", "forks": 5.0,
		"nested":               map[string]any{"list": []any{"v0.161.0", true}},
		"myriarch_delivery_id": executor.DeliveryID("r-1", "a00", 1, executor.OpStart),
		"myriarch_version":     "0.161.0", "myriarch_operation": "start", "myriarch_rollout": "r-1", "myriarch_agent": "a00",
		"myriarch_attempt": 1.0,
	}
	if got := l.Body["extra_vars"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("extra_vars\n got %v\nwant %v", got, want)
	}
	if j, _ := f.srv.Job(l.Job); j.Limit != "edge-1.example.com" || j.ExtraVars["otelcol_version"] != "0.161.0" || !slices.Equal(j.Credentials, []int{3}) {
		t.Fatalf("job %+v: AWX applied the limit, the variables and the credentials", j)
	}
}

func TestStart_LimitTemplateAndHostAttribute(t *testing.T) {
	f := newFixture(t)
	f.start(f.call(func(o *executorobject.AWX) { o.Limit = "dc_{host}"; o.HostAttribute = "labels.dc" }))
	if got := f.srv.Launches()[0].Body["limit"]; got != "dc_fra" {
		t.Fatalf("limit %v, want dc_fra", got)
	}
}

// A Start is at-least-once: its repeat finds the job of the same delivery
// instead of launching a second one; the next attempt or a reset is a new
// delivery and launches.
func TestStart_RepeatFindsTheJobOfTheDelivery(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.call(nil)
	first := f.start(c)
	f.now = f.now.Add(30 * time.Second)
	again, err := f.ex.Start(ctx, c)
	if err != nil || again != first || len(f.srv.Launches()) != 1 {
		t.Fatalf("repeat: ref %q err %v launches %d, want %q and one launch", again, err, len(f.srv.Launches()), first)
	}
	retry := c
	retry.Target.Attempt = 2
	if ref, err := f.ex.Start(ctx, retry); err != nil || ref == first {
		t.Fatalf("attempt 2: ref %q err %v, want a new job", ref, err)
	}
	reset := c
	reset.Operation, reset.Version = executor.OpReset, "0.160.0"
	if ref, err := f.ex.Start(ctx, reset); err != nil || ref == first {
		t.Fatalf("reset: ref %q err %v, want a new job", ref, err)
	}
	if n := len(f.srv.Launches()); n != 3 {
		t.Fatalf("%d launches, want 3", n)
	}
	f.now = f.now.Add(2 * time.Hour) // beyond the window a repeat is not looked for
	if ref, err := f.ex.Start(ctx, c); err != nil || ref == first {
		t.Fatalf("late repeat: ref %q err %v, want a new job", ref, err)
	}
}

func TestStart_MissingHostFailsWithoutACall(t *testing.T) {
	f := newFixture(t)
	c := f.call(nil)
	c.Agent.Attributes = map[string]string{"service.name": "otelcol"}
	_, err := f.ex.Start(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "no host.name attribute") {
		t.Fatalf("err %v, want the missing host.name", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Fatalf("%d requests, want none", n)
	}
	c = f.call(func(o *executorobject.AWX) { o.Limit = "agents_{agent}" })
	c.Agent = agent.Agent{}
	if _, err := f.ex.Start(context.Background(), c); err != nil {
		t.Fatalf("a limit without {host} needs no host: %v", err)
	}
}

// AWX ignores a field its template does not prompt for, and the job would
// run on the whole inventory: Start cancels it and fails.
func TestStart_IgnoredLimitCancelsTheJob(t *testing.T) {
	f := newFixture(t)
	f.srv.AddTemplate(awxtest.Template{ID: 7, Name: "upgrade otelcol", AskVariables: true})
	_, err := f.ex.Start(context.Background(), f.call(nil))
	if err == nil || !strings.Contains(err.Error(), "ignored limit on launch") || !strings.Contains(err.Error(), "was canceled") {
		t.Fatalf("err %v, want the ignored limit and the job canceled", err)
	}
	jobs := f.srv.Jobs()
	if len(jobs) != 1 || jobs[0].Status != awxtest.StatusCanceled || jobs[0].Limit != "" {
		t.Fatalf("jobs %+v, want the one job launched without the limit, canceled", jobs)
	}
}

func TestStart_RetriesUnavailableAWX(t *testing.T) {
	f := newFixture(t)
	f.srv.FailNext(503, 2)
	ref, err := f.ex.Start(context.Background(), f.call(nil))
	if err != nil || ref == "" {
		t.Fatalf("ref %q err %v, want a job after two 503s", ref, err)
	}
	if !slices.Equal(f.sleeps, []time.Duration{time.Second, time.Second}) { // Retry-After: 1
		t.Fatalf("sleeps %v, want Retry-After twice", f.sleeps)
	}
	if n := len(f.srv.Launches()); n != 1 {
		t.Fatalf("%d launches, want 1", n)
	}
}

func TestStart_GivesUpAfterRetryFor(t *testing.T) {
	f := newFixture(t)
	f.srv.FailNext(503, 1000)
	_, err := f.ex.Start(context.Background(), f.call(func(o *executorobject.AWX) { o.RetryFor = 10 * time.Second }))
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "retryFor 10s") {
		t.Fatalf("err %v, want the last 503 after retryFor", err)
	}
	if total := sum(f.sleeps); total > 10*time.Second {
		t.Fatalf("slept %s, more than retryFor", total)
	}
}

func TestStart_WrongTokenIsNotRetried(t *testing.T) {
	f := newFixture(t)
	_, err := f.ex.Start(context.Background(), f.call(func(o *executorobject.AWX) { o.CredentialRef = "awx/wrong" }))
	var ae *awx.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(err.Error(), "credentialRef") {
		t.Fatalf("err %v, want a 401 naming credentialRef", err)
	}
	if n := len(f.srv.Requests()); n != 1 || len(f.sleeps) > 0 {
		t.Fatalf("%d requests, sleeps %v: a 401 is not retried", n, f.sleeps)
	}
}

func TestStart_BadRequestCarriesAWXsAnswer(t *testing.T) {
	f := newFixture(t)
	f.srv.AddTemplate(awxtest.Template{ID: 7, AskLimit: true, AskVariables: true, SurveyRequired: []string{"ticket"}})
	_, err := f.ex.Start(context.Background(), f.call(nil))
	var ae *awx.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Excerpt, "'ticket' value missing") {
		t.Fatalf("err %v, want AWX's 400 with its field error", err)
	}
}

func TestValidate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ok := f.call(nil).Rollout
	if err := f.ex.Validate(ctx, ok); err != nil {
		t.Fatalf("a template prompting for limit and variables: %v", err)
	}
	f.srv.AddTemplate(awxtest.Template{ID: 8, SurveyRequired: []string{"ticket", "otelcol_version"}, Passwords: []string{"ssh_password"}})
	for _, c := range []struct {
		name string
		r    rollout.Rollout
		want []string
	}{
		{name: "no object", r: rollout.Rollout{ID: "r-1"}, want: []string{"no AWX executor object"}},
		{name: "incomplete object", r: rollout.Rollout{ExecutorObject: &executorobject.Object{Name: "x", AWX: &executorobject.AWX{}}},
			want: []string{"awx.url is required", "awx.jobTemplateId", "awx.credentialRef"}},
		{name: "unreadable token", r: withObject(ok, func(o *executorobject.AWX) { o.CredentialRef = "awx/missing" }), want: []string{"read the token awx/missing"}},
		{name: "reserved variable", r: withObject(ok, func(o *executorobject.AWX) { o.ExtraVars = map[string]any{"myriarch_version": "x"} }),
			want: []string{"awx.extraVars.myriarch_version"}},
		{name: "template without prompts", r: withObject(ok, func(o *executorobject.AWX) {
			o.JobTemplateID, o.Credentials, o.ExtraVars = 8, []int{3}, map[string]any{"otelcol_version": "{version}"}
		}), want: []string{"Prompt on launch for Limit", "Prompt on launch for Variables", "Prompt on launch for Credentials", "ssh_password", "survey requires ticket"}},
		{name: "unknown template", r: withObject(ok, func(o *executorobject.AWX) { o.JobTemplateID = 99 }), want: []string{"404"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := f.ex.Validate(ctx, c.r)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want %q", err, w)
				}
			}
		})
	}
}

func withObject(r rollout.Rollout, edit func(*executorobject.AWX)) rollout.Rollout {
	o := *r.ExecutorObject
	a := *o.AWX
	edit(&a)
	o.AWX = &a
	r.ExecutorObject = &o
	return r
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.call(nil)
	if err := f.ex.Cancel(ctx, c); err != nil || len(f.srv.Requests()) != 0 {
		t.Fatalf("no reference: err %v requests %v, want nothing to cancel", err, f.srv.Requests())
	}
	ref := f.start(c)
	c.Target.ExternalRef, c.Operation = ref, executor.OpCancel
	id, _ := awx.JobID(ref)
	if err := f.ex.Cancel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if j, _ := f.srv.Job(id); j.Status != awxtest.StatusCanceled {
		t.Fatalf("job %+v, want canceled", j)
	}
	f.srv.SetStatus(id, awxtest.StatusSuccessful, "")
	if err := f.ex.Cancel(ctx, c); err != nil {
		t.Fatalf("a job that ended (405) is no error: %v", err)
	}
	c.Target.ExternalRef = awx.Ref(9999)
	if err := f.ex.Cancel(ctx, c); err != nil {
		t.Fatalf("a job that no longer exists is no error: %v", err)
	}
}

func TestFailed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.call(nil)
	ref := f.start(c)
	c.Target.ExternalRef = ref
	id, _ := awx.JobID(ref)
	for _, s := range []struct {
		status, explanation, traceback string
		failed                         bool
		reason                         string
	}{
		{status: awxtest.StatusPending},
		{status: awxtest.StatusRunning},
		{status: awxtest.StatusSuccessful}, // success is what the collector reports
		{status: awxtest.StatusFailed, failed: true, reason: "AWX job 101 failed (status failed)"},
		{status: awxtest.StatusFailed, explanation: "Previous Task Failed: {\"job_type\": \"project_update\"}", failed: true,
			reason: `AWX job 101 failed (status failed): Previous Task Failed: {"job_type": "project_update"}`},
		{status: awxtest.StatusError, traceback: "Traceback (most recent call last):\n  ...\nRuntimeError: receptor unreachable", failed: true,
			reason: "AWX job 101 failed (status error): Traceback (most recent call last): ... RuntimeError: receptor unreachable"},
		{status: awxtest.StatusCanceled, failed: true, reason: "AWX job 101 failed (status canceled)"},
	} {
		f.srv.SetStatus(id, s.status, s.explanation)
		f.srv.SetTraceback(id, s.traceback)
		reason, failed, err := f.ex.Failed(ctx, c)
		if err != nil || failed != s.failed || reason != s.reason {
			t.Errorf("status %s: reason %q failed %v err %v, want %q %v", s.status, reason, failed, err, s.reason, s.failed)
		}
	}
	c.Target.ExternalRef = executor.Manual
	if _, failed, err := f.ex.Failed(ctx, c); failed || err != nil {
		t.Fatalf("a reference that is no AWX job's: failed %v err %v", failed, err)
	}
}

// Failed asks once: a poll that fails is an error, and the next pass asks again.
func TestFailed_DoesNotRetry(t *testing.T) {
	f := newFixture(t)
	c := f.call(nil)
	c.Target.ExternalRef = awx.Ref(101)
	f.srv.FailNext(503, 1)
	if _, failed, err := f.ex.Failed(context.Background(), c); err == nil || failed || len(f.sleeps) > 0 {
		t.Fatalf("failed %v err %v sleeps %v, want one 503 as the error", failed, err, f.sleeps)
	}
}

func TestAPIRoot_AAPGatewayPath(t *testing.T) {
	f := newFixture(t)
	c := f.call(func(o *executorobject.AWX) { o.URL = f.url + "/api/controller/v2/" })
	_, _ = f.ex.Start(context.Background(), c)
	if got := f.srv.Requests(); len(got) == 0 || !strings.HasPrefix(got[0], "GET /api/controller/v2/jobs/") {
		t.Fatalf("requests %v, want the API root the URL names", got)
	}
	c = f.call(func(o *executorobject.AWX) { o.URL = "ftp://awx.example.com" })
	if _, err := f.ex.Start(context.Background(), c); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Fatalf("err %v, want the URL refused", err)
	}
}

func TestJobID(t *testing.T) {
	for _, c := range []struct {
		ref string
		id  int
		ok  bool
	}{
		{ref: "awx-job:42", id: 42, ok: true},
		{ref: "", ok: false},
		{ref: "manual", ok: false},
		{ref: "awx-job:", ok: false},
		{ref: "awx-job:-1", ok: false},
	} {
		if id, ok := awx.JobID(c.ref); id != c.id || ok != c.ok {
			t.Errorf("JobID(%q) = %d, %v; want %d, %v", c.ref, id, ok, c.id, c.ok)
		}
	}
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}
