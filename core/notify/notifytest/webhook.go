package notifytest

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/myriarch/myriarch/core/notify"
)

// Webhook is a receiver of the webhook's calls for the tests: it answers
// with Statuses in turn (then 204), and records the calls it accepted.
type Webhook struct {
	Statuses []int

	mu       sync.Mutex
	calls    int
	accepted []Call
}

// Call is one accepted call: the envelope it carried and its headers.
type Call struct {
	Envelope notify.Envelope
	Header   http.Header
}

// ServeHTTP answers one call.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var env notify.Envelope
	if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
		rw.WriteHeader(http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	status := http.StatusNoContent
	if w.calls < len(w.Statuses) {
		status = w.Statuses[w.calls]
	}
	w.calls++
	if status < 300 {
		w.accepted = append(w.accepted, Call{Envelope: env, Header: r.Header.Clone()})
	}
	rw.WriteHeader(status)
}

// Calls counts every call, accepted or not.
func (w *Webhook) Calls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// Accepted are the calls accepted, in order.
func (w *Webhook) Accepted() []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Call(nil), w.accepted...)
}

// IDs are the event ids accepted, in order: of one rollout, or of all ("").
func (w *Webhook) IDs(rolloutID string) []string {
	var out []string
	for _, c := range w.Accepted() {
		if rolloutID == "" || c.Envelope.Detail.Rollout.ID == rolloutID {
			out = append(out, c.Envelope.Detail.EventID)
		}
	}
	return out
}
