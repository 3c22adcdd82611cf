package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

const secret = "s3cr3t-signing-key"

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// received is one request as the test receiver saw it.
type received struct {
	header   http.Header
	path     string
	body     []byte
	delivery Delivery
}

// receiver is a webhook receiver on 127.0.0.1: it verifies every request's
// signature with the secret (a wrong one is answered 401 and fails the
// test), records it, and answers with the scripted handlers in turn.
type receiver struct {
	t       *testing.T
	url     string
	now     func() time.Time
	mu      sync.Mutex
	got     []received
	answers []http.HandlerFunc
}

func newReceiver(t *testing.T, now func() time.Time, answers ...http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{t: t, now: now, answers: answers}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := Verify(secret, r.Header.Get(HeaderSignature), body, rc.now(), DefaultTolerance); err != nil {
		rc.t.Errorf("the receiver refuses the request: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var d Delivery
	if err := json.Unmarshal(body, &d); err != nil {
		rc.t.Errorf("body %s: %v", body, err)
	}
	rc.mu.Lock()
	n := len(rc.got)
	rc.got = append(rc.got, received{header: r.Header.Clone(), path: r.URL.Path, body: body, delivery: d})
	rc.mu.Unlock()
	if len(rc.answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rc.answers[min(n, len(rc.answers)-1)](w, r)
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func answer(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// fakeClock advances only by the sleeps it records.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// setup is an executor with a fake clock and a receiver answering in turn.
func setup(t *testing.T, answers ...http.HandlerFunc) (Executor, *receiver, *fakeClock) {
	t.Helper()
	clk := &fakeClock{now: t0}
	rc := newReceiver(t, clk.Now, answers...)
	return Executor{Secrets: secrets.Map{"edge-hook": secret}, Now: clk.Now, Sleep: clk.Sleep}, rc, clk
}

func hookObject(url string) *executorobject.Object {
	o := executorobject.Object{Name: "edge-hook", Type: executorobject.TypeWebhook, Webhook: &executorobject.Webhook{
		URL: url + "/myriarch", SecretRef: "edge-hook", Headers: map[string]string{"X-Team": "observability"},
		Cancel: true, CancelURL: url + "/myriarch/cancel",
	}}.WithDefaults()
	return &o
}

// agentID is an agent id as the gateway makes it of an OpAMP instance UID:
// the body carries it as the inventory has it (a dashed UUID), and the
// documentation's examples show that one.
var agentID = func() string {
	id, err := gateway.InstanceID([]byte{0x01, 0x94, 0xf0, 0xc2, 0xa1, 0xb2, 0x7c, 0x3d, 0x8e, 0x9f, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f})
	if err != nil {
		panic(err)
	}
	return id
}()

func call(url string, attempt int, op string) executor.Call {
	r := rollout.Rollout{ID: "r-20260302t100000-1a2b3c4d", Fleet: "edge", Kind: policy.KindVersion, ToRef: "0.162.0",
		Policy: policy.Snapshot{Name: "demo-version"}, Executor: executorobject.TypeWebhook, ExecutorObject: hookObject(url)}
	t := rollout.Target{RolloutID: r.ID, AgentID: agentID, Attempt: attempt, FromRef: "0.161.0", ToRef: "0.162.0",
		Status: rollout.TargetInProgress}
	a := agent.Agent{ID: t.AgentID, Fleet: "edge", Attributes: map[string]string{
		"host.name": "web-01", "service.name": "otelcol-contrib", "service.version": "0.161.0", "cloud.region": "eu-west-1"}}
	version := r.ToRef
	if op == executor.OpReset {
		version = t.FromRef
	}
	return executor.Call{Rollout: r, Target: t, Agent: a, Version: version, Operation: op}
}

// The body of a start, byte for byte (testdata/start.json), signed as the
// receiver verifies it, with the executor's headers and the object's.
func TestStart_SignedDelivery(t *testing.T) {
	e, rc, _ := setup(t, answer(http.StatusAccepted, `{"id": "job-4711", "status": "queued"}`))
	ref, err := e.Start(context.Background(), call(rc.url, 1, executor.OpStart))
	if err != nil || ref != "job-4711" {
		t.Fatalf("ref %q err %v, want the receiver's job-4711", ref, err)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	req := got[0]
	golden, err := os.ReadFile("testdata/start.json")
	if err != nil {
		t.Fatal(err)
	}
	var want, have any
	_ = json.Unmarshal(golden, &want)
	_ = json.Unmarshal(req.body, &have)
	if wj, hj := mustJSON(t, want), mustJSON(t, have); wj != hj {
		t.Errorf("body\n%s\nwant (testdata/start.json)\n%s", req.body, golden)
	}
	id := executor.DeliveryID("r-20260302t100000-1a2b3c4d", agentID, 1, "start")
	for h, v := range map[string]string{
		"Content-Type": "application/json", "User-Agent": UserAgent, HeaderDelivery: id, HeaderEvent: "start",
		HeaderSignature: Sign(secret, t0, req.body), "X-Team": "observability",
	} {
		if req.header.Get(h) != v {
			t.Errorf("header %s = %q, want %q", h, req.header.Get(h), v)
		}
	}
	if req.path != "/myriarch" || req.delivery.DeliveryID != id {
		t.Errorf("path %s delivery %s", req.path, req.delivery.DeliveryID)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A Start repeated for the same target and attempt carries the same
// delivery id; another attempt or operation has another.
func TestDeliveryID_StableAcrossRepeatedStarts(t *testing.T) {
	e, rc, _ := setup(t)
	ctx := context.Background()
	for _, c := range []executor.Call{call(rc.url, 1, executor.OpStart), call(rc.url, 1, executor.OpStart), call(rc.url, 2, executor.OpStart), call(rc.url, 1, executor.OpReset)} {
		if _, err := e.Start(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Cancel(ctx, call(rc.url, 1, executor.OpCancel)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rc.requests() {
		ids = append(ids, r.header.Get(HeaderDelivery))
	}
	if len(ids) != 5 || ids[0] != ids[1] {
		t.Fatalf("ids %v, want the first two equal", ids)
	}
	if slices.Contains(ids[2:], ids[0]) || ids[2] == ids[3] || ids[3] == ids[4] || ids[2] == ids[4] {
		t.Fatalf("ids %v, want attempt 2, the reset and the cancel to differ from each other and from the start", ids)
	}
	u, err := uuid.Parse(ids[0])
	if err != nil || u.Version() != 5 {
		t.Fatalf("delivery id %s is not a name-based (version 5) UUID: %v", ids[0], err)
	}
}

func TestStart_RetriesA503ThenAccepts(t *testing.T) {
	e, rc, clk := setup(t, answer(503, "upstream down"), answer(503, "upstream down"), answer(200, ""))
	ref, err := e.Start(context.Background(), call(rc.url, 1, executor.OpStart))
	if err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 3 || !slices.Equal(clk.sleeps(), []time.Duration{time.Second, 2 * time.Second}) {
		t.Fatalf("%d requests, backoff %v; want 3 and [1s 2s]", len(got), clk.sleeps())
	}
	if ref != got[0].delivery.DeliveryID || got[2].header.Get(HeaderDelivery) != ref {
		t.Errorf("ref %q: without an id in the answer, the delivery id", ref)
	}
	// Each try is signed anew with its own time; sentAt is that time.
	if !got[2].delivery.SentAt.Equal(t0.Add(3*time.Second)) || got[0].header.Get(HeaderSignature) == got[2].header.Get(HeaderSignature) {
		t.Errorf("third try sent at %s with signature %s", got[2].delivery.SentAt, got[2].header.Get(HeaderSignature))
	}
}

func TestStart_HonoursRetryAfterOf429(t *testing.T) {
	e, rc, clk := setup(t, answer(429, "", "Retry-After", "20"), answer(202, ""))
	if _, err := e.Start(context.Background(), call(rc.url, 1, executor.OpStart)); err != nil {
		t.Fatal(err)
	}
	if len(rc.requests()) != 2 || !slices.Equal(clk.sleeps(), []time.Duration{20 * time.Second}) {
		t.Fatalf("%d requests, slept %v; want 2 after Retry-After's 20s", len(rc.requests()), clk.sleeps())
	}
}

// A 400 fails the target at once; the message has the status and an
// excerpt of the body.
func TestStart_A400FailsTheTarget(t *testing.T) {
	e, rc, clk := setup(t, answer(400, `{"error": "host web-01 is not in the inventory"}`))
	_, err := e.Start(context.Background(), call(rc.url, 1, executor.OpStart))
	if err == nil || len(rc.requests()) != 1 || len(clk.sleeps()) != 0 {
		t.Fatalf("err %v after %d requests", err, len(rc.requests()))
	}
	want := `webhook start: ` + rc.url + `/myriarch answered 400 Bad Request: {"error": "host web-01 is not in the inventory"}`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

func TestStart_RetriesATimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	e, rc, clk := setup(t, hang, answer(202, ""))
	c := call(rc.url, 1, executor.OpStart)
	c.Rollout.ExecutorObject.Webhook.Timeout = 50 * time.Millisecond
	if _, err := e.Start(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(rc.requests()) != 2 || !slices.Equal(clk.sleeps(), []time.Duration{time.Second}) {
		t.Fatalf("%d requests, slept %v", len(rc.requests()), clk.sleeps())
	}
}

// Beyond retryFor the last error fails the target.
func TestStart_GivesUpAfterRetryFor(t *testing.T) {
	e, rc, _ := setup(t, answer(503, "maintenance"))
	c := call(rc.url, 1, executor.OpStart)
	c.Rollout.ExecutorObject.Webhook.RetryFor = 10 * time.Second
	_, err := e.Start(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 tries") || !strings.Contains(err.Error(), "503 Service Unavailable: maintenance") {
		t.Fatalf("err %v", err)
	}
}

// A reset asks for the version before: fromVersion is the rollout's.
func TestStart_Reset(t *testing.T) {
	e, rc, _ := setup(t)
	if _, err := e.Start(context.Background(), call(rc.url, 1, executor.OpReset)); err != nil {
		t.Fatal(err)
	}
	d := rc.requests()[0]
	if d.delivery.Operation != "reset" || d.header.Get(HeaderEvent) != "reset" || d.delivery.FromVersion != "0.162.0" || d.delivery.ToVersion != "0.161.0" {
		t.Fatalf("delivery %+v", d.delivery)
	}
}

func TestCancel(t *testing.T) {
	e, rc, _ := setup(t)
	ctx := context.Background()
	c := call(rc.url, 1, executor.OpCancel)
	c.Agent, c.Version = agent.Agent{}, "" // a superseded rollout's cancel knows the target only
	if err := e.Cancel(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()
	if len(got) != 1 || got[0].path != "/myriarch/cancel" {
		t.Fatalf("requests %+v, want one to the cancelUrl", got)
	}
	d := got[0].delivery
	if d.Operation != "cancel" || d.DeliveryID != executor.DeliveryID(c.Rollout.ID, c.Target.AgentID, 1, "cancel") || d.FromVersion != "0.161.0" || d.ToVersion != "0.162.0" ||
		d.Agent.ID != c.Target.AgentID || d.Agent.Attributes == nil {
		t.Fatalf("delivery %+v", d)
	}
	c.Rollout.ExecutorObject.Webhook.Cancel = false
	if err := e.Cancel(ctx, c); err != nil || len(rc.requests()) != 1 {
		t.Fatalf("err %v, %d requests: without cancel: true nothing is sent", err, len(rc.requests()))
	}
}

// A cancel is retried for CancelRetryFor at most.
func TestCancel_RetriesBriefly(t *testing.T) {
	e, rc, clk := setup(t, answer(503, ""))
	if err := e.Cancel(context.Background(), call(rc.url, 1, executor.OpCancel)); err == nil {
		t.Fatal("a cancel the receiver never accepts fails")
	}
	var total time.Duration
	for _, d := range clk.sleeps() {
		total += d
	}
	if total > CancelRetryFor {
		t.Fatalf("slept %s in all, more than %s", total, CancelRetryFor)
	}
}

func TestValidate(t *testing.T) {
	e, rc, _ := setup(t)
	ctx := context.Background()
	good := call(rc.url, 1, executor.OpStart).Rollout
	if err := e.Validate(ctx, good); err != nil {
		t.Fatalf("valid: %v", err)
	}
	noObject := good
	noObject.ExecutorObject = nil
	awx := good
	awx.ExecutorObject = &executorobject.Object{Name: "edge-hook", Type: executorobject.TypeAWX, AWX: &executorobject.AWX{}}
	noSecret := good
	o := *good.ExecutorObject
	w := *o.Webhook
	w.SecretRef = "missing"
	o.Webhook = &w
	noSecret.ExecutorObject = &o
	for name, r := range map[string]rollout.Rollout{"no object": noObject, "an awx object": awx, "no secret": noSecret} {
		if err := e.Validate(ctx, r); !errors.Is(err, ErrMisconfigured) {
			t.Errorf("%s: %v, want ErrMisconfigured", name, err)
		}
	}
	if err := (Executor{Now: time.Now}).Validate(ctx, good); !errors.Is(err, ErrMisconfigured) {
		t.Errorf("no secret source: %v", err)
	}
	if len(rc.requests()) != 0 {
		t.Fatal("Validate sends nothing")
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"operation":"start"}`)
	sig := Sign(secret, t0, body)
	cases := []struct {
		name, secret, header string
		body                 []byte
		now                  time.Time
		want                 error // nil: valid; errAny: some error
	}{
		{name: "valid", secret: secret, header: sig, body: body, now: t0.Add(time.Minute), want: nil},
		{name: "other body", secret: secret, header: sig, body: []byte(`{"operation":"reset"}`), now: t0, want: ErrSignatureInvalid},
		{name: "other secret", secret: "guess", header: sig, body: body, now: t0, want: ErrSignatureInvalid},
		{name: "time changed", secret: secret, header: strings.Replace(sig, "t=", "t=1", 1), body: body, now: t0, want: ErrSignatureInvalid},
		{name: "replayed later", secret: secret, header: sig, body: body, now: t0.Add(DefaultTolerance + time.Second), want: ErrSignatureExpired},
		{name: "from the future", secret: secret, header: sig, body: body, now: t0.Add(-DefaultTolerance - time.Second), want: ErrSignatureExpired},
		{name: "two signatures, one good", secret: secret, header: "t=" + sig[2:strings.Index(sig, ",")] + ",v1=00," + sig[strings.Index(sig, ",")+1:], body: body, now: t0, want: nil},
		{name: "no v1", secret: secret, header: "t=1", body: body, now: t0, want: errAny},
		{name: "garbage", secret: secret, header: "sha256=abc", body: body, now: t0, want: errAny},
	}
	for _, c := range cases {
		err := Verify(c.secret, c.header, c.body, c.now, DefaultTolerance)
		switch {
		case c.want == nil && err != nil, c.want == errAny && err == nil, c.want != nil && c.want != errAny && !errors.Is(err, c.want):
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
	}
}

var errAny = errors.New("any error")

func TestExternalRef(t *testing.T) {
	const id = "d-1"
	for body, want := range map[string]string{
		`{"id": "job-7"}`: "job-7", `{"id": 4711}`: "4711", `{"id": null}`: id, `{"id": {"a": 1}}`: id, `{"id": ""}`: id,
		`{"id": "two words"}`: id, `{"id": "` + strings.Repeat("x", 65) + `"}`: id, `accepted`: id, ``: id, `[1]`: id,
	} {
		if got := externalRef([]byte(body), id); got != want {
			t.Errorf("externalRef(%s) = %q, want %q", body, got, want)
		}
	}
}

// TestDocs_BodyExamplesAreTheWire: the bodies docs/executors.md shows, a
// start and the cancel of a superseded rollout (which knows no agent), are
// what the executor sends, ids included (a dashed agent id, the delivery
// id made of it), but for the cancel's sentAt.
func TestDocs_BodyExamplesAreTheWire(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/executors.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]any{}
	for _, block := range strings.Split(string(doc), "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var v map[string]any
		if json.Unmarshal([]byte(block), &v) == nil && v["operation"] != nil {
			examples[v["operation"].(string)] = v
		}
	}
	e, rc, clk := setup(t)
	if _, err := e.Start(context.Background(), call(rc.url, 1, executor.OpStart)); err != nil {
		t.Fatal(err)
	}
	clk.now = time.Date(2026, 3, 2, 10, 4, 12, 0, time.UTC)
	cancel := call(rc.url, 1, executor.OpCancel)
	cancel.Agent = agent.Agent{}
	if err := e.Cancel(context.Background(), cancel); err != nil {
		t.Fatal(err)
	}
	for i, op := range []string{"start", "cancel"} {
		var sent any
		if err := json.Unmarshal(rc.requests()[i].body, &sent); err != nil {
			t.Fatal(err)
		}
		if want, got := mustJSON(t, examples[op]), mustJSON(t, sent); want != got {
			t.Errorf("docs/executors.md's %s body is not the wire:\ndoc:  %s\nwire: %s", op, want, got)
		}
	}
}
