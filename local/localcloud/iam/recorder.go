package iam

import (
	"encoding/json"
	"os"
	"sync"
)

// Call is one evaluated (role, action, resource) and its outcome. Error
// explains a call denied without evaluation (an unknown role or
// operation).
type Call struct {
	Role     string `json:"role"`
	Action   string `json:"action"`
	Resource string `json:"resource"`
	Allowed  bool   `json:"allowed"`
	Error    string `json:"error,omitempty"`
}

type callKey struct {
	role, action, resource string
	allowed                bool
}

// Recorder keeps each distinct call once, in memory and as one JSON line
// in a file: the list of what a run used, and of what it was refused.
// Safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	file  *os.File
	seen  map[callKey]bool
	calls []Call
}

// NewRecorder writes to the file at path, replacing what an earlier run
// left there: the file is one run's calls ("" keeps them in memory only).
func NewRecorder(path string) (*Recorder, error) {
	r := &Recorder{seen: map[callKey]bool{}}
	if path == "" {
		return r, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	r.file = f
	return r, nil
}

// Record keeps a call unless the same (role, action, resource, allowed)
// was recorded before.
func (r *Recorder) Record(c Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := callKey{c.Role, c.Action, c.Resource, c.Allowed}
	if r.seen[k] {
		return nil
	}
	r.seen[k] = true
	r.calls = append(r.calls, c)
	if r.file == nil {
		return nil
	}
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = r.file.Write(append(line, '\n'))
	return err
}

// Calls lists the distinct calls in the order they were first made.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Denials lists the calls that were denied.
func (r *Recorder) Denials() []Call {
	var out []Call
	for _, c := range r.Calls() {
		if !c.Allowed {
			out = append(out, c)
		}
	}
	return out
}

// Close closes the file.
func (r *Recorder) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}
