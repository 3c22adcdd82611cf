package updater

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var allDone = map[Step]string{
	StepOffered: StepDone, StepDownloading: StepDone, StepVerifying: StepDone,
	StepInstalling: StepDone, StepRestarting: StepDone, StepHealthCheck: StepDone,
}

// An offer of a newer version goes through every step: current switches,
// the previous version stays, older ones go, and every change is reported.
func TestHandle_Upgrade_Succeeds(t *testing.T) {
	e := newEnv(t)
	e.seed("0.148.0", "0.149.0")
	u := e.updater()
	u.Resume(context.Background())

	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))

	a := e.last().Attempt
	if a.Status != Succeeded || a.From != "0.149.0" || a.Offer.Version != "0.150.0" || a.LastError != "" {
		t.Fatalf("attempt %+v", a)
	}
	if got := stepStatuses(a); !maps.Equal(got, allDone) {
		t.Errorf("steps %v, want all done", got)
	}
	if got := e.current(); got != "0.150.0" {
		t.Errorf("current %s", got)
	}
	if got := e.versions(); !equal(got, []string{"0.149.0", "0.150.0"}) {
		t.Errorf("versions %v, want the new and the previous", got)
	}
	b, err := os.ReadFile(e.layout.binary("0.150.0"))
	if err != nil || !strings.Contains(string(b), "version 0.150.0") {
		t.Errorf("binary %q, %v", b, err)
	}
	if fi, err := os.Stat(e.layout.binary("0.150.0")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("binary mode %v, %v", fi.Mode(), err)
	}
	if e.restarts != 1 {
		t.Errorf("%d restarts", e.restarts)
	}
	wantStatuses := []string{"offered", "downloading", "verifying", "installing", "restarting", "health_check", "succeeded"}
	if got := e.statuses(); !equal(got, wantStatuses) {
		t.Errorf("statuses %v\nwant %v", got, wantStatuses)
	}
	wantPkgs := []string{"Installed has 0.149.0", "Installing has 0.149.0", "Downloading has 0.149.0 0%",
		"Downloading has 0.149.0 100%", "Installing has 0.149.0", "Installing has 0.150.0", "Installed has 0.150.0"}
	if got := e.packages(); !equal(got, wantPkgs) {
		t.Errorf("packages %v\nwant %v", got, wantPkgs)
	}
	if p := e.last().Package; p.Name != "collector" || p.OfferedVersion != "0.150.0" || len(p.AllPackagesHash) != 32 {
		t.Errorf("package %+v", p)
	}
	if _, err := os.Stat(filepath.Join(e.state, "downloads")); !os.IsNotExist(err) {
		t.Errorf("downloads left behind: %v", err)
	}
	if j, _ := loadJournal(filepath.Join(e.state, "update.json")); j.Previous != "0.149.0" || j.Attempt.Status != Succeeded {
		t.Errorf("journal %+v", j)
	}
}

// A failure before the switch ends the attempt failed at its step, with
// current, the versions and the restart count as they were.
func TestHandle_FailsBeforeSwitch(t *testing.T) {
	tests := []struct {
		name  string
		offer func(e *env) Offer
		step  Step
		err   error  // errors.Is, when set
		text  string // in last_error
		asked bool   // the mirror was asked
	}{
		{name: "downgrade", offer: func(e *env) Offer { return e.publish("0.147.0", release(e.t, "0.147.0")) },
			step: StepOffered, err: ErrDowngrade, text: "only the one-step return to the previous version 0.148.0"},
		{name: "not semver", offer: func(e *env) Offer { return e.publish("latest", release(e.t, "latest")) },
			step: StepOffered, err: ErrBadVersion},
		{name: "URL not allowed", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			o.URL = strings.Replace(o.URL, "/otelcol/", "/elsewhere/", 1)
			return o
		}, step: StepDownloading, err: ErrURLNotAllowed},
		{name: "not found", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			o.URL += ".missing"
			return o
		}, step: StepDownloading, text: "404", asked: true},
		{name: "tampered archive", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			e.files.Store(strings.TrimPrefix(o.URL, e.mirror.URL), release(e.t, "0.150.0-evil"))
			return o
		}, step: StepVerifying, err: ErrNotVerified, text: "SHA-256 of the download", asked: true},
		{name: "tampered archive and hash", offer: func(e *env) Offer {
			evil := release(e.t, "0.150.0-evil")
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			e.files.Store(strings.TrimPrefix(o.URL, e.mirror.URL), evil)
			o.ContentHash = sha256Of(evil)
			return o
		}, step: StepVerifying, err: ErrNotVerified, text: "signature does not verify", asked: true},
		{name: "signed by another key", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			other := newEnv(e.t)
			o.Signature = other.publish("0.150.0", release(e.t, "0.150.0")).Signature
			return o
		}, step: StepVerifying, err: ErrNotVerified, text: "signed with key", asked: true},
		{name: "no hash", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			o.ContentHash = nil
			return o
		}, step: StepVerifying, err: ErrNotVerified, text: "no content hash", asked: true},
		{name: "no signature", offer: func(e *env) Offer {
			o := e.publish("0.150.0", release(e.t, "0.150.0"))
			o.Signature = nil
			return o
		}, step: StepVerifying, err: ErrNotVerified, text: "no signature", asked: true},
		{name: "no binary in the archive", offer: func(e *env) Offer {
			return e.publish("0.150.0", tarGz(e.t, entry{name: "otelcol", body: "other"}))
		}, step: StepInstalling, err: errArchive, text: "no otelcol-contrib", asked: true},
		{name: "path traversal", offer: func(e *env) Offer {
			return e.publish("0.150.0", tarGz(e.t, entry{name: "../../otelcol-contrib", body: "x"}, entry{name: binaryName, body: "x"}))
		}, step: StepInstalling, err: errArchive, text: "leaves the archive", asked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("0.148.0", "0.149.0")
			writeJournal(t, e, Journal{Previous: "0.148.0"})
			u := e.updater()
			u.Handle(context.Background(), tt.offer(e))

			a := e.last().Attempt
			if a.Status != Failed || a.Steps[tt.step].Status != StepFailed || a.Steps[tt.step].LastError != a.LastError {
				t.Fatalf("attempt %s, step %s %+v, want failed at %s", a.Status, tt.step, a.Steps[tt.step], tt.step)
			}
			if tt.err != nil && !strings.Contains(a.LastError, tt.err.Error()) {
				t.Errorf("last error %q, want %q", a.LastError, tt.err)
			}
			if !strings.Contains(a.LastError, tt.text) {
				t.Errorf("last error %q, want %q in it", a.LastError, tt.text)
			}
			if asked := e.requests.Load() > 0; asked != tt.asked {
				t.Errorf("mirror asked: %v, want %v", asked, tt.asked)
			}
			assertUntouched(t, e)
			p := e.last().Package
			if p.Status != PackageInstallFailed || p.Error != a.LastError || p.HasVersion != "0.149.0" {
				t.Errorf("package %+v", p)
			}
		})
	}
}

// assertUntouched: the host as seeded, nothing left of the attempt.
func assertUntouched(t *testing.T, e *env) {
	t.Helper()
	if got := e.current(); got != "0.149.0" {
		t.Errorf("current %s, want 0.149.0", got)
	}
	if got := e.versions(); !equal(got, []string{"0.148.0", "0.149.0"}) {
		t.Errorf("versions %v", got)
	}
	if e.restarts != 0 {
		t.Errorf("%d restarts", e.restarts)
	}
	if _, err := os.Stat(filepath.Join(e.state, "downloads")); !os.IsNotExist(err) {
		t.Errorf("downloads left behind: %v", err)
	}
}

func writeJournal(t *testing.T, e *env, j Journal) {
	t.Helper()
	if err := os.MkdirAll(e.state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := saveJournal(filepath.Join(e.state, "update.json"), j); err != nil {
		t.Fatal(err)
	}
}

// A new version that does not come up healthy, or whose restart fails, is
// rolled back: current returns to the version before, which restarts and
// is checked, and the failed version's directory goes.
func TestHandle_RollsBack(t *testing.T) {
	tests := []struct {
		name     string
		restart  func(e *env) func() error
		failed   Step
		restarts int
	}{
		{name: "health check fails", failed: StepHealthCheck, restarts: 2},
		{name: "restart fails", failed: StepRestarting, restarts: 2, restart: func(e *env) func() error {
			return func() error {
				if e.restarts == 1 {
					return errors.New("exit status 1: Job for otelcol.service failed")
				}
				return nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("0.148.0", "0.149.0")
			e.unhealthy["0.150.0"] = errors.New("http://127.0.0.1:13133/ answered 503")
			if tt.restart != nil {
				e.restartFn = tt.restart(e)
			}
			u := e.updater()
			u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))

			a := e.last().Attempt
			if a.Status != RolledBack || a.Steps[tt.failed].Status != StepFailed || a.Steps[StepRollingBack].Status != StepDone {
				t.Fatalf("attempt %s, steps %v", a.Status, stepStatuses(a))
			}
			if !strings.HasPrefix(a.LastError, "rolled back to 0.149.0: ") || !strings.Contains(a.LastError, a.Steps[tt.failed].LastError) {
				t.Errorf("last error %q", a.LastError)
			}
			if got := e.current(); got != "0.149.0" {
				t.Errorf("current %s", got)
			}
			if got := e.versions(); !equal(got, []string{"0.149.0"}) {
				t.Errorf("versions %v: the failed one goes, the one before the attempt's went at the switch", got)
			}
			if e.restarts != tt.restarts {
				t.Errorf("%d restarts, want %d", e.restarts, tt.restarts)
			}
			if got := e.statuses(); got[len(got)-2] != "rolling_back" || got[len(got)-1] != "rolled_back" {
				t.Errorf("statuses %v", got)
			}
			if p := e.last().Package; p.Status != PackageInstallFailed || p.HasVersion != "0.149.0" || p.Error != a.LastError {
				t.Errorf("package %+v", p)
			}
			if h := e.last().Health(t0); !h.GetComponentHealthMap()[UpdateComponent].GetHealthy() {
				t.Error("a rolled back attempt reported unhealthy; only a failed one is")
			}
		})
	}
}

// When the version before does not come back either, the attempt fails
// with both errors.
func TestHandle_RollbackFails(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	e.unhealthy["0.150.0"] = errors.New("new: 503")
	e.unhealthy["0.149.0"] = errors.New("old: 503")
	u := e.updater()
	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))

	a := e.last().Attempt
	if a.Status != Failed || a.Steps[StepRollingBack].Status != StepFailed {
		t.Fatalf("attempt %s, steps %v", a.Status, stepStatuses(a))
	}
	if !strings.Contains(a.LastError, "new: 503") || !strings.Contains(a.LastError, "rollback to 0.149.0 failed") || !strings.Contains(a.LastError, "old: 503") {
		t.Errorf("last error %q, want both errors", a.LastError)
	}
	if got := e.current(); got != "0.149.0" {
		t.Errorf("current %s, want the rollback's switch to stand", got)
	}
	if e.last().Health(t0).GetComponentHealthMap()[UpdateComponent].GetHealthy() {
		t.Error("a failed attempt reported healthy")
	}
}

// The first install has nothing to return to.
func TestHandle_FirstInstall(t *testing.T) {
	t.Run("succeeds", func(t *testing.T) {
		e := newEnv(t)
		u := e.updater()
		u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))
		if a := e.last().Attempt; a.Status != Succeeded || a.From != "" || e.current() != "0.150.0" {
			t.Fatalf("attempt %+v, current %s", a, e.current())
		}
		if c := e.last().Health(t0).GetComponentHealthMap()[UpdateComponent]; c.GetComponentHealthMap()["from"].GetStatus() != "" {
			t.Errorf("from %q, want empty", c.GetComponentHealthMap()["from"].GetStatus())
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		e := newEnv(t)
		e.unhealthy["0.150.0"] = errors.New("503")
		u := e.updater()
		u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))
		a := e.last().Attempt
		if a.Status != Failed || !strings.Contains(a.LastError, "no previous version to return to") {
			t.Fatalf("attempt %s %q", a.Status, a.LastError)
		}
	})
}

// The one downgrade allowed is the return to the previous version, whose
// directory the last switch kept; after it, the version left is previous.
func TestHandle_OneStepReturn(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	u := e.updater()
	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))
	u.Handle(context.Background(), e.publish("0.149.0", release(t, "0.149.0")))

	if a := e.last().Attempt; a.Status != Succeeded || a.From != "0.150.0" || e.current() != "0.149.0" {
		t.Fatalf("attempt %s from %s, current %s", a.Status, a.From, e.current())
	}
	if u.previous() != "0.150.0" {
		t.Errorf("previous %q", u.previous())
	}
	b, _ := os.ReadFile(e.layout.binary("0.149.0"))
	if !strings.Contains(string(b), "version 0.149.0") {
		t.Errorf("binary %q: want the verified archive's, not the seeded one", b)
	}
	// A second step down is a downgrade beyond previous.
	u.Handle(context.Background(), e.publish("0.148.0", release(t, "0.148.0")))
	if a := e.last().Attempt; a.Status != Failed || a.Steps[StepOffered].Status != StepFailed {
		t.Errorf("attempt %s, steps %v", a.Status, stepStatuses(a))
	}
}

// An offer of the running version is acknowledged as installed, without an
// attempt; the same offer again (the server resends it) does nothing.
func TestHandle_RunningVersion_Acknowledged(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	u := e.updater()
	u.Handle(context.Background(), e.publish("0.149.0", release(t, "0.149.0")))

	r := e.last()
	if r.Attempt != nil || r.Package.Status != PackageInstalled || r.Package.HasVersion != "0.149.0" || r.Package.OfferedVersion != "0.149.0" {
		t.Fatalf("report %+v", r)
	}
	if e.requests.Load() != 0 || e.restarts != 0 {
		t.Errorf("%d requests, %d restarts", e.requests.Load(), e.restarts)
	}
	n := len(e.reports)
	u.Handle(context.Background(), e.publish("0.149.0", release(t, "0.149.0")))
	if len(e.reports) != n {
		t.Error("the same offer again was handled again")
	}
}

// A failed offer is not retried when the server resends it; a new offer of
// the same version (a retry, with a new all-packages hash) is.
func TestHandle_ResentOffer_NotRetried(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	e.unhealthy["0.150.0"] = errors.New("503")
	u := e.updater()
	o := e.publish("0.150.0", release(t, "0.150.0"))
	u.Handle(context.Background(), o)
	u.Handle(context.Background(), o)
	if e.restarts != 2 {
		t.Fatalf("%d restarts, want the attempt's two only", e.restarts)
	}
	delete(e.unhealthy, "0.150.0")
	o.AllPackagesHash = sha256Of([]byte("retry"))
	u.Handle(context.Background(), o)
	if a := e.last().Attempt; a.Status != Succeeded {
		t.Errorf("retry %s", a.Status)
	}
}

// A current that the updater did not make is not replaced.
func TestHandle_CurrentNotASymlink(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.layout.Root, "current"), 0o755); err != nil {
		t.Fatal(err)
	}
	u := e.updater()
	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))
	a := e.last().Attempt
	if a.Status != Failed || a.Steps[StepOffered].Status != StepFailed || !strings.Contains(a.LastError, "not a symlink") {
		t.Fatalf("attempt %s %q", a.Status, a.LastError)
	}
}

// A journal that cannot be written stops the attempt before the step.
func TestHandle_JournalNotWritable(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	u := e.updater()
	if err := os.Mkdir(filepath.Join(e.state, "update.json"), 0o755); err != nil { // rename(2) cannot replace a directory
		t.Fatal(err)
	}
	u.Handle(context.Background(), e.publish("0.150.0", release(t, "0.150.0")))
	a := e.last().Attempt
	if a.Status != Failed || !strings.Contains(a.LastError, "write journal") || a.Steps[StepDownloading].Status != "" {
		t.Fatalf("attempt %s %q, steps %v", a.Status, a.LastError, stepStatuses(a))
	}
	if e.requests.Load() != 0 || e.current() != "0.149.0" {
		t.Errorf("%d requests, current %s", e.requests.Load(), e.current())
	}
}
