package updater

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"aead.dev/minisign"
)

// Config is what an Updater works with; the program builds it from the
// host's configuration file.
type Config struct {
	StateDir           string // the journal and the downloads
	Layout             Layout
	AllowedURLPrefixes []string
	MaxArchiveBytes    int64 // 0: DefaultMaxArchiveBytes
	PublicKey          minisign.PublicKey
	HTTPClient         *http.Client // downloads; nil: http.DefaultClient
	Restarter          Restarter
	Health             HealthChecker
	Clock              Clock
	// Report is told every change, from the goroutine that works; it must
	// not call back into the Updater's Resume or Handle.
	Report func(Report)
	Log    *slog.Logger // nil: slog.Default()
}

// Updater carries out offers on one host, one attempt at a time.
type Updater struct {
	cfg     Config
	journal string // its path

	mu      sync.Mutex // guards j and percent, which Snapshot reads
	j       Journal
	percent int

	// crash, set by tests, is called at each point where a crash must be
	// harmless (each step's start, between extraction and switch, ...).
	crash func(point string)
}

// New prepares the state directory and the collector's directory and reads
// the journal. Call Resume before the first Handle.
func New(cfg Config) (*Updater, error) {
	if cfg.Layout.Root == "" || cfg.Layout.Binary == "" || cfg.StateDir == "" {
		return nil, errors.New("updater: the collector root, its binary and a state directory are required")
	}
	if len(cfg.AllowedURLPrefixes) == 0 {
		return nil, errors.New("updater: at least one allowed URL prefix is required")
	}
	if cfg.Restarter == nil || cfg.Health == nil || cfg.Clock == nil {
		return nil, errors.New("updater: a restarter, a health check and a clock are required")
	}
	if cfg.MaxArchiveBytes <= 0 {
		cfg.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Report == nil {
		cfg.Report = func(Report) {}
	}
	for _, dir := range []string{cfg.StateDir, cfg.Layout.versionsDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("updater: %w", err)
		}
	}
	u := &Updater{cfg: cfg, journal: filepath.Join(cfg.StateDir, "update.json")}
	j, err := loadJournal(u.journal)
	if err != nil {
		return nil, fmt.Errorf("updater: %w", err)
	}
	u.j = j
	return u, nil
}

// Snapshot is the report of now: the last attempt and the package status,
// with the running version read from current.
func (u *Updater) Snapshot() Report {
	current, err := u.cfg.Layout.Current()
	if err != nil {
		u.cfg.Log.Warn("read the running version", "err", err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return Report{Attempt: u.j.Attempt.clone(), Package: packageReport(u.j, current, u.percent)}
}

func (u *Updater) report() { u.cfg.Report(u.Snapshot()) }

// Resume finishes or undoes what a crash left of the last attempt (see
// resumeAt), then reports; with no attempt left unfinished it only reports.
func (u *Updater) Resume(ctx context.Context) {
	a := u.j.Attempt
	if a == nil || a.Ended() {
		u.report()
		return
	}
	current, err := u.cfg.Layout.Current()
	if err != nil {
		u.cfg.Log.Warn("read the running version", "err", err)
	}
	at, clean := resumeAt(a.Running(), current == a.Offer.Version)
	u.cfg.Log.Info("resume the update left unfinished", "version", a.Offer.Version, "step", a.Running(), "at", at, "clean", clean)
	if clean {
		u.clean()
	}
	u.mu.Lock()
	a.forget(at)
	u.mu.Unlock()
	u.run(ctx, at)
}

// Handle takes an offer: one handled already (the server resends it) is
// left alone, one of the running version is acknowledged as installed,
// any other is an attempt, carried out before Handle returns.
func (u *Updater) Handle(ctx context.Context, o Offer) {
	o.Version = bare(o.Version)
	if last := u.j.Offer; last != nil && last.Same(o) {
		return
	}
	current, err := u.cfg.Layout.Current()
	u.mu.Lock()
	u.j.Offer = &o
	acknowledged := err == nil && current == o.Version
	if !acknowledged {
		u.j.Attempt, u.percent = newAttempt(o, current, u.cfg.Clock.Now()), 0
	}
	u.mu.Unlock()
	if acknowledged {
		u.cfg.Log.Info("offer of the running version acknowledged", "version", o.Version)
		u.warn("write journal", u.save())
		u.report()
		return
	}
	u.run(ctx, StepOffered)
}

func (u *Updater) save() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return saveJournal(u.journal, u.j)
}

// clean removes what an attempt left before its switch: the downloads and
// half-extracted directories.
func (u *Updater) clean() {
	u.warn("remove the downloads", os.RemoveAll(u.downloads()))
	u.warn("remove partial extractions", u.cfg.Layout.cleanPartial())
}

func (u *Updater) downloads() string { return filepath.Join(u.cfg.StateDir, "downloads") }

func (u *Updater) archive(version string) string {
	return filepath.Join(u.downloads(), version+partialSuffix)
}

func (u *Updater) warn(what string, err error) {
	if err != nil {
		u.cfg.Log.Warn(what, "err", err)
	}
}

func (u *Updater) crashPoint(point string) {
	if u.crash != nil {
		u.crash(point)
	}
}
