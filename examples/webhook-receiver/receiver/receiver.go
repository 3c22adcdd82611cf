// Package receiver is an example receiver of Myriarch's webhook executor:
// it verifies each request's signature, does the work of a delivery once
// however often it is sent (by its delivery id), and hands starts and
// resets to Install and cancels to Cancel. examples/webhook-receiver runs
// it in front of a simulated fleet; a real one would start a deployment
// job instead. Myriarch learns that an update succeeded from the version
// the collector reports, never from the answer.
package receiver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/myriarch/myriarch/adapters/executor/webhook"
)

// maxBodyBytes bounds a request's body; a delivery is a few hundred bytes.
const maxBodyBytes = 1 << 20

// Receiver is an http.Handler for the deliveries of one executor object.
type Receiver struct {
	Secret    string           // the signing secret: the object's secretRef
	Now       func() time.Time // the clock the signature's time is checked against
	Tolerance time.Duration    // 0: webhook.DefaultTolerance
	// Install updates the collector on host to version (a start or a
	// reset). It should only begin the work: the sender waits for the
	// answer. An error is answered 422 and fails the target.
	Install func(host, version string) error
	// Cancel withdraws the update that the start of the same rollout and
	// agent began, where it can; nil accepts cancels and does nothing.
	Cancel func(d webhook.Delivery) error
	Log    *slog.Logger

	mu   sync.Mutex
	jobs map[string]string // job id by delivery id
	log  []webhook.Delivery
}

// answer is the JSON of a 2xx answer: the job's id, which Myriarch keeps
// as the target's external reference.
type answer struct {
	ID        string `json:"id"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		refuse(w, http.StatusMethodNotAllowed, "send POST or PUT")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		refuse(w, http.StatusRequestEntityTooLarge, "the body is over 1 MiB")
		return
	}
	tolerance := rc.Tolerance
	if tolerance == 0 {
		tolerance = webhook.DefaultTolerance
	}
	// First the signature: nothing of an unsigned body is read.
	if err := webhook.Verify(rc.Secret, r.Header.Get(webhook.HeaderSignature), body, rc.Now(), tolerance); err != nil {
		rc.logger().Warn("refused a request", "error", err.Error(), "remote", r.RemoteAddr)
		refuse(w, http.StatusUnauthorized, "signature: "+err.Error())
		return
	}
	var d webhook.Delivery
	if err := json.Unmarshal(body, &d); err != nil || d.DeliveryID == "" || d.DeliveryID != r.Header.Get(webhook.HeaderDelivery) {
		refuse(w, http.StatusBadRequest, "the body is not a delivery with the id of "+webhook.HeaderDelivery)
		return
	}
	code, a, err := rc.handle(d)
	if err != nil {
		refuse(w, code, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(a)
}

// handle does a delivery's work unless it was done before. The lock is
// held throughout, so that two copies of one delivery arriving together
// do the work once.
func (rc *Receiver) handle(d webhook.Delivery) (int, answer, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if job, seen := rc.jobs[d.DeliveryID]; seen {
		rc.logger().Info("duplicate delivery: done before", "delivery", d.DeliveryID, "job", job)
		return http.StatusOK, answer{ID: job, Duplicate: true}, nil
	}
	var err error
	switch d.Operation {
	case "start", "reset":
		if d.Agent.Host == "" {
			return http.StatusUnprocessableEntity, answer{}, errors.New("the delivery names no host")
		}
		err = rc.Install(d.Agent.Host, d.ToVersion)
	case "cancel":
		if rc.Cancel != nil {
			err = rc.Cancel(d)
		}
	default:
		return http.StatusUnprocessableEntity, answer{}, fmt.Errorf("unknown operation %q", d.Operation)
	}
	if err != nil {
		return http.StatusUnprocessableEntity, answer{}, err
	}
	if rc.jobs == nil {
		rc.jobs = map[string]string{}
	}
	job := fmt.Sprintf("job-%d", len(rc.jobs)+1)
	rc.jobs[d.DeliveryID] = job
	rc.log = append(rc.log, d)
	rc.logger().Info("delivery accepted", "operation", d.Operation, "delivery", d.DeliveryID, "job", job,
		"rollout", d.Rollout.ID, "host", d.Agent.Host, "from", d.FromVersion, "to", d.ToVersion)
	return http.StatusAccepted, answer{ID: job}, nil
}

// Deliveries returns every delivery accepted, each once, in order.
func (rc *Receiver) Deliveries() []webhook.Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]webhook.Delivery(nil), rc.log...)
}

func (rc *Receiver) logger() *slog.Logger {
	if rc.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return rc.Log
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
