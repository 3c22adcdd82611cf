// Package webhook is the webhook executor: Start (and Cancel, when the
// executor object asks for it) is an HTTP request with a JSON Delivery,
// signed with HMAC-SHA256 under the object's secret and carrying a
// deterministic delivery id. The receiver does the update however it
// likes; the update has succeeded when the collector reports the version,
// never because the receiver said so.
//
// Starting a version through a webhook is at-least-once: the request is
// retried on 5xx, 429 and timeouts within the object's retryFor, and the
// engine may repeat a Start. Every repetition carries the same
// X-Myriarch-Delivery, by which the receiver de-duplicates.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/myriarch/myriarch/adapters/executor/httpcall"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/rollout"
)

// UserAgent of the requests.
const UserAgent = "myriarch/v1alpha1 (webhook executor)"

// CancelRetryFor bounds the retries of a cancel (retryFor when shorter): a
// cancel follows the end of its rollout, and whoever ends it (the planner,
// an operator's abort) must not wait long on a receiver that is down.
const CancelRetryFor = 15 * time.Second

// maxExternalRefLength bounds the id of an answer kept as the target's
// external reference.
const maxExternalRefLength = 64

// Executor calls the webhook of a rollout's executor object. Now and Sleep
// are the clock (the backoff sleeps through Sleep; nil is a timer); HTTP
// nil is a client of its own. The timeout of a request is the object's.
type Executor struct {
	HTTP    *http.Client
	Secrets executor.Secrets
	Now     func() time.Time
	Sleep   func(ctx context.Context, d time.Duration) error
	Log     *slog.Logger
}

var _ executor.Executor = Executor{}

// ErrMisconfigured is wrapped by the errors of a rollout the executor
// cannot call for: no webhook object, no secret, no clock.
var ErrMisconfigured = errors.New("webhook executor misconfigured")

// Validate reports what would fail every Start: the rollout has no webhook
// object, or its signing secret cannot be read.
func (e Executor) Validate(ctx context.Context, r rollout.Rollout) error {
	w, err := e.hook(r)
	if err != nil {
		return err
	}
	_, err = e.secret(ctx, r.ExecutorObject.Name, w)
	return err
}

// Start sends a start (or, for c.Operation reset, a reset) and returns the
// receiver's id for it: the "id" of a JSON answer, else the delivery id.
func (e Executor) Start(ctx context.Context, c executor.Call) (string, error) {
	op := c.Operation
	if op != executor.OpReset {
		op = executor.OpStart
	}
	w, err := e.hook(c.Rollout)
	if err != nil {
		return "", err
	}
	res, id, err := e.send(ctx, c, op, w.URL, w.RetryFor)
	if err != nil {
		return "", err
	}
	return externalRef(res.Body, id), nil
}

// Cancel sends a cancel when the object has cancel: true; else it does
// nothing and succeeds.
func (e Executor) Cancel(ctx context.Context, c executor.Call) error {
	w, err := e.hook(c.Rollout)
	if err != nil || !w.Cancel {
		return err
	}
	_, _, err = e.send(ctx, c, executor.OpCancel, orURL(w.CancelURL, w.URL), min(w.RetryFor, CancelRetryFor))
	return err
}

// send delivers one operation: the body and its signature are made anew
// for every try (with the try's time), the delivery id stays.
func (e Executor) send(ctx context.Context, c executor.Call, op, url string, retryFor time.Duration) (httpcall.Response, string, error) {
	name := c.Rollout.ExecutorObject.Name
	w := c.Rollout.ExecutorObject.Webhook
	secret, err := e.secret(ctx, name, w)
	if err != nil {
		return httpcall.Response{}, "", err
	}
	id := executor.DeliveryID(c.Rollout.ID, c.Target.AgentID, c.Target.Attempt, op)
	log := e.logger().With("rollout", c.Rollout.ID, "agent", c.Target.AgentID, "operation", op, "delivery", id)
	caller := httpcall.Caller{HTTP: e.HTTP, Now: e.Now, Sleep: e.Sleep, OnRetry: func(err error, wait time.Duration) {
		log.Warn("webhook call failed; trying again", "error", err.Error(), "wait", wait.String())
	}}
	res, err := caller.Do(ctx, httpcall.Request{Timeout: w.Timeout, RetryFor: retryFor, New: func(ctx context.Context) (*http.Request, error) {
		now := time.Unix(e.Now().Unix(), 0) // the signature's precision, so sentAt is its t
		body, err := json.Marshal(delivery(c, op, name, now))
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, w.Method, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range w.Headers {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", UserAgent)
		req.Header.Set(HeaderDelivery, id)
		req.Header.Set(HeaderEvent, op)
		req.Header.Set(HeaderSignature, Sign(secret, now, body))
		return req, nil
	}})
	if err != nil {
		return res, id, fmt.Errorf("webhook %s: %w", op, err)
	}
	log.Debug("webhook call accepted", "status", res.Status, "tries", res.Tries)
	return res, id, nil
}

// hook is the rollout's webhook object, or why there is none.
func (e Executor) hook(r rollout.Rollout) (*executorobject.Webhook, error) {
	o := r.ExecutorObject
	switch {
	case o == nil:
		return nil, fmt.Errorf("%w: rollout %s has no executor object (the fleet's update.executorRef)", ErrMisconfigured, r.ID)
	case o.Type != executorobject.TypeWebhook || o.Webhook == nil:
		return nil, fmt.Errorf("%w: executor object %q of rollout %s is of type %q, not webhook", ErrMisconfigured, o.Name, r.ID, o.Type)
	case e.Now == nil:
		return nil, fmt.Errorf("%w: no clock", ErrMisconfigured)
	}
	w := o.Webhook.WithDefaults() // an object stored before a default was added
	return &w, nil
}

func (e Executor) secret(ctx context.Context, name string, w *executorobject.Webhook) (string, error) {
	if e.Secrets == nil {
		return "", fmt.Errorf("%w: no secret source", ErrMisconfigured)
	}
	s, err := e.Secrets.Secret(ctx, w.SecretRef)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: the signing secret %q of executor %q: %w", ErrMisconfigured, w.SecretRef, name, err)
	case s == "":
		return "", fmt.Errorf("%w: the signing secret %q of executor %q is empty", ErrMisconfigured, w.SecretRef, name)
	}
	return s, nil
}

func (e Executor) logger() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// externalRef is the "id" of a JSON answer (a string or a number) when it
// is short and printable, else the delivery id.
func externalRef(body []byte, deliveryID string) string {
	var answer struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &answer) != nil || len(answer.ID) == 0 {
		return deliveryID
	}
	var id string
	if json.Unmarshal(answer.ID, &id) != nil {
		var n json.Number
		if json.Unmarshal(answer.ID, &n) != nil {
			return deliveryID // null, an object, a list
		}
		id = n.String()
	}
	if id == "" || len(id) > maxExternalRefLength || strings.ContainsFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) {
		return deliveryID
	}
	return id
}

func orURL(u, def string) string {
	if u == "" {
		return def
	}
	return u
}
