package updater

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// run carries the attempt from step s to its end. Each step is recorded in
// the journal before it starts; a journal that cannot be written stops the
// attempt there, since a step that is not recorded could not be finished
// or undone after a crash. A cancelled ctx (the program stops) leaves the
// journal as it is, for Resume.
func (u *Updater) run(ctx context.Context, s Step) {
	for {
		if err := u.begin(s); err != nil {
			u.finish(s, fmt.Errorf("write journal: %w", err), Failed)
			return
		}
		u.crashPoint(string(s))
		err := u.do(ctx, s)
		if ctx.Err() != nil {
			u.cfg.Log.Info("update interrupted; the next start resumes it", "step", s)
			return
		}
		next, end := after(s, err != nil)
		u.finish(s, err, end)
		if end != "" {
			return
		}
		s = next
	}
}

func (u *Updater) begin(s Step) error {
	u.mu.Lock()
	u.j.Attempt.begin(s, u.cfg.Clock.Now())
	a := u.j.Attempt
	u.mu.Unlock()
	u.cfg.Log.Info("update step", "step", s, "version", a.Offer.Version, "from", a.From)
	err := u.save()
	u.report()
	return err
}

// finish records how step s went and, with end, how the attempt ended.
func (u *Updater) finish(s Step, err error, end string) {
	u.mu.Lock()
	a := u.j.Attempt
	now := u.cfg.Clock.Now()
	a.finish(s, now, err)
	if end != "" {
		a.end(end, now, endError(a, s, err))
	}
	u.mu.Unlock()
	if err != nil {
		u.cfg.Log.Warn("update step failed", "step", s, "version", a.Offer.Version, "err", err)
	}
	if end != "" {
		u.cfg.Log.Info("update ended", "status", end, "version", a.Offer.Version, "err", a.LastError)
		u.clean() // nothing of a download is needed once the attempt ended
	}
	u.warn("write journal", u.save())
	u.report()
}

// endError is the attempt's last_error: the failed step's error; after a
// rollback, the error that caused it, and when the rollback failed too,
// both.
func endError(a *Attempt, s Step, err error) string {
	switch {
	case s == StepRollingBack && err != nil:
		return fmt.Sprintf("%s; rollback to %s failed: %v", a.failure(), a.From, err)
	case s == StepRollingBack:
		return fmt.Sprintf("rolled back to %s: %s", a.From, a.failure())
	case err != nil:
		return err.Error()
	}
	return ""
}

// do carries out one step.
func (u *Updater) do(ctx context.Context, s Step) error {
	a := u.attempt()
	switch s {
	case StepOffered:
		if _, err := u.cfg.Layout.Current(); err != nil { // a current the updater did not make
			return err
		}
		return checkVersion(a.Offer.Version, a.From, u.previous())
	case StepDownloading:
		return u.download(ctx, a.Offer)
	case StepVerifying:
		return verify(u.archive(a.Offer.Version), a.Offer.ContentHash, a.Offer.Signature, u.cfg.PublicKey, u.cfg.MaxArchiveBytes)
	case StepInstalling:
		return u.install(a)
	case StepRestarting:
		return u.cfg.Restarter.Restart(ctx)
	case StepHealthCheck:
		return u.cfg.Health.Check(ctx, a.Offer.Version)
	case StepRollingBack:
		return u.rollback(ctx, a)
	}
	return fmt.Errorf("unknown step %q", s)
}

func (u *Updater) attempt() *Attempt {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.j.Attempt.clone()
}

func (u *Updater) previous() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.j.Previous
}

// download checks the URL against the host's prefixes before any request.
func (u *Updater) download(ctx context.Context, o Offer) error {
	if err := AllowedURL(o.URL, u.cfg.AllowedURLPrefixes); err != nil {
		return err
	}
	if err := os.MkdirAll(u.downloads(), 0o700); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return download(ctx, u.cfg.HTTPClient, o.URL, u.archive(o.Version), u.cfg.MaxArchiveBytes, func(percent int) {
		u.mu.Lock()
		u.percent = percent
		u.mu.Unlock()
		u.report()
	})
}

// install extracts the verified archive and switches current to it, unless
// current points there already (a resume after the switch). What follows
// the switch is bookkeeping whose failure does not fail the step: the new
// version is in place, and failing here would leave it there with the
// attempt ended as if nothing had changed.
func (u *Updater) install(a *Attempt) error {
	l, v := u.cfg.Layout, a.Offer.Version
	if current, _ := l.Current(); current != v {
		if err := l.install(u.archive(v), v, a.Offer.ContentHash, u.cfg.MaxArchiveBytes); err != nil {
			return err
		}
		u.crashPoint("installing:extracted")
		if err := l.switchTo(v); err != nil {
			if current, _ := l.Current(); current != v {
				return err
			}
			u.warn("switch", err) // switched; only the sync of the directory failed
		}
		u.crashPoint("installing:switched")
	}
	u.mu.Lock()
	u.j.Previous = a.From
	u.mu.Unlock()
	u.warn("write journal", u.save())
	u.warn("remove older versions", l.prune(v, a.From))
	u.warn("remove the download", os.RemoveAll(u.downloads()))
	return nil
}

// rollback switches current back to the version the attempt came from,
// restarts and checks it. The failed version's directory goes once the
// old one runs healthy; with it the previous version (the one before the
// attempt's was removed at the switch).
func (u *Updater) rollback(ctx context.Context, a *Attempt) error {
	if a.From == "" {
		return errors.New("no previous version to return to")
	}
	l := u.cfg.Layout
	if err := l.switchTo(a.From); err != nil {
		if current, _ := l.Current(); current != a.From {
			return err
		}
		u.warn("switch", err)
	}
	u.crashPoint("rolling_back:switched")
	if err := u.cfg.Restarter.Restart(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := u.cfg.Health.Check(ctx, a.From); err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	u.mu.Lock()
	u.j.Previous = ""
	u.mu.Unlock()
	u.warn("remove the failed version", os.RemoveAll(l.dir(a.Offer.Version)))
	return nil
}
