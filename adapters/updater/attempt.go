package updater

import (
	"bytes"
	"maps"
	"time"
)

// Step is one step of an attempt, named as the server's rollout page names it.
type Step string

const (
	StepOffered     Step = "offered"
	StepDownloading Step = "downloading"
	StepVerifying   Step = "verifying"
	StepInstalling  Step = "installing"
	StepRestarting  Step = "restarting"
	StepHealthCheck Step = "health_check"
	StepRollingBack Step = "rolling_back"
)

// How an attempt ends; while it runs, its status is the running step.
const (
	Succeeded  = "succeeded"
	Failed     = "failed"
	RolledBack = "rolled_back"
)

// What one step can be.
const (
	StepRunning = "running"
	StepDone    = "done"
	StepFailed  = "failed"
)

// Offer is the collector package of a PackagesAvailable message, as the
// journal keeps it so that an interrupted attempt can start over.
type Offer struct {
	Package         string `json:"package"`               // the name the server gave it; statuses are reported under it
	Version         string `json:"version"`               // without a leading v
	PackageHash     []byte `json:"packageHash,omitempty"` // OpAMP's hash of the package, reported back as offered
	URL             string `json:"url"`
	ContentHash     []byte `json:"contentHash,omitempty"` // SHA-256 of the archive
	Signature       []byte `json:"signature,omitempty"`   // a minisign .minisig file of the archive
	AllPackagesHash []byte `json:"allPackagesHash,omitempty"`
}

// Same reports whether o and p are the same offer: a retry of a version is
// a new offer with a new all-packages hash.
func (o Offer) Same(p Offer) bool {
	return o.Package == p.Package && o.Version == p.Version && bytes.Equal(o.AllPackagesHash, p.AllPackagesHash)
}

// StepState is one step of an attempt as reported.
type StepState struct {
	Status     string    `json:"status"` // StepRunning, StepDone or StepFailed
	StartedAt  time.Time `json:"startedAt"`
	StatusTime time.Time `json:"statusTime"`
	LastError  string    `json:"lastError,omitempty"`
}

// Attempt is one update as the updater reports it: state, not events, so
// that the server may miss a report and still read where the host stands.
type Attempt struct {
	Offer      Offer              `json:"offer"`
	From       string             `json:"from"`   // the version current pointed to when the attempt began
	Status     string             `json:"status"` // the running step, or Succeeded, Failed, RolledBack
	StartedAt  time.Time          `json:"startedAt"`
	StatusTime time.Time          `json:"statusTime"`
	LastError  string             `json:"lastError,omitempty"`
	Steps      map[Step]StepState `json:"steps"` // the steps begun
}

// newAttempt is an attempt about to begin its offered step.
func newAttempt(o Offer, from string, now time.Time) *Attempt {
	return &Attempt{Offer: o, From: from, StartedAt: now, Steps: map[Step]StepState{}}
}

// Ended reports whether the attempt has ended, one way or another.
func (a *Attempt) Ended() bool {
	return a.Status == Succeeded || a.Status == Failed || a.Status == RolledBack
}

// Running is the running step, "" once the attempt ended.
func (a *Attempt) Running() Step {
	if a.Ended() {
		return ""
	}
	return Step(a.Status)
}

// begin starts a step: it becomes the attempt's status.
func (a *Attempt) begin(s Step, now time.Time) {
	a.Steps[s] = StepState{Status: StepRunning, StartedAt: now, StatusTime: now}
	a.Status, a.StatusTime = string(s), now
}

// finish ends a step as done, or as failed with the error's text.
func (a *Attempt) finish(s Step, now time.Time, err error) {
	st := a.Steps[s]
	st.Status, st.StatusTime = StepDone, now
	if err != nil {
		st.Status, st.LastError = StepFailed, err.Error()
	}
	a.Steps[s] = st
	a.StatusTime = now
}

// end ends the attempt; lastError says why it did not succeed.
func (a *Attempt) end(status string, now time.Time, lastError string) {
	a.Status, a.StatusTime, a.LastError = status, now, lastError
}

// forget drops the steps from s on in the order of the steps, so that an
// attempt resumed at s begins them again; the rollback is never forgotten
// by a forward step.
func (a *Attempt) forget(s Step) {
	for i := index(s); i >= 0 && i < len(forward); i++ {
		delete(a.Steps, forward[i])
	}
	if s == StepRollingBack {
		delete(a.Steps, StepRollingBack)
	}
}

// failure is the error of the step that sent the attempt into its rollback.
func (a *Attempt) failure() string {
	for _, s := range []Step{StepRestarting, StepHealthCheck} {
		if st := a.Steps[s]; st.Status == StepFailed {
			return st.LastError
		}
	}
	return ""
}

func (a *Attempt) clone() *Attempt {
	if a == nil {
		return nil
	}
	c := *a
	c.Steps = maps.Clone(a.Steps)
	return &c
}
