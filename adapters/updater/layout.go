package updater

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Layout is the collector's directory (collector.root):
//
//	versions/<version>/<binary>   one directory per installed version
//	current → versions/<version>  the symlink the collector's service runs
//
// The symlink is relative, so that the root may be mounted elsewhere.
type Layout struct {
	Root   string
	Binary string // the executable's name, in the archive and under versions/<version>/
}

const partialSuffix = ".partial"

func (l Layout) versionsDir() string          { return filepath.Join(l.Root, "versions") }
func (l Layout) dir(version string) string    { return filepath.Join(l.versionsDir(), version) }
func (l Layout) currentLink() string          { return filepath.Join(l.Root, "current") }
func (l Layout) binary(version string) string { return filepath.Join(l.dir(version), l.Binary) }

// Current is the version current points to; "" when there is no current
// yet. Anything else at current (a directory, a link out of versions/) is
// an error: the updater does not replace what it did not make.
func (l Layout) Current() (string, error) {
	target, err := os.Readlink(l.currentLink())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if errors.Is(err, syscall.EINVAL) {
		return "", fmt.Errorf("%s is not a symlink", l.currentLink())
	}
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(l.Root, target)
	}
	version := filepath.Base(target)
	if filepath.Dir(target) != l.versionsDir() || strings.HasSuffix(version, partialSuffix) {
		return "", fmt.Errorf("%s points to %s, outside %s", l.currentLink(), target, l.versionsDir())
	}
	return version, nil
}

// switchTo points current at versions/<version> atomically: a new symlink
// under a temporary name, renamed over current (rename(2) replaces it in one
// step), then the root synced so that the switch survives a power loss.
func (l Layout) switchTo(version string) error {
	if _, err := os.Stat(l.binary(version)); err != nil {
		return fmt.Errorf("switch to %s: %w", version, err)
	}
	tmp := l.currentLink() + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("switch to %s: %w", version, err)
	}
	if err := os.Symlink(filepath.Join("versions", version), tmp); err != nil {
		return fmt.Errorf("switch to %s: %w", version, err)
	}
	if err := os.Rename(tmp, l.currentLink()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("switch to %s: %w", version, err)
	}
	if err := syncDir(l.Root); err != nil {
		return fmt.Errorf("switch to %s: %w", version, err)
	}
	return nil
}

// prune deletes every version directory but those kept, and what an
// interrupted extraction left.
func (l Layout) prune(keep ...string) error {
	entries, err := os.ReadDir(l.versionsDir())
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !contains(keep, e.Name()) {
			errs = append(errs, os.RemoveAll(filepath.Join(l.versionsDir(), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// cleanPartial removes the half-extracted directories.
func (l Layout) cleanPartial() error {
	entries, err := os.ReadDir(l.versionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), partialSuffix) {
			errs = append(errs, os.RemoveAll(filepath.Join(l.versionsDir(), e.Name())))
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x != "" && x == s {
			return true
		}
	}
	return false
}
