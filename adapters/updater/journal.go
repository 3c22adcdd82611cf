package updater

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Journal is what the updater keeps in stateDir/update.json: the last
// attempt, finished or not, written before each of its steps starts, so
// that a start after a crash knows where the attempt stood.
type Journal struct {
	Attempt *Attempt `json:"attempt,omitempty"`
	// Offer is the last offer handled, also one acknowledged without an
	// attempt (the version already ran): the server resends an offer, and
	// the same offer is not tried twice.
	Offer *Offer `json:"offer,omitempty"`
	// Previous is the version whose directory the last switch kept: the
	// rollback's target and the one downgrade allowed.
	Previous string `json:"previous,omitempty"`
}

// loadJournal reads the journal; a missing one is the zero journal.
func loadJournal(path string) (Journal, error) {
	var j Journal
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return j, fmt.Errorf("read journal: %w", err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return j, fmt.Errorf("read journal %s: %w", path, err)
	}
	if a := j.Attempt; a != nil && a.Steps == nil {
		a.Steps = map[Step]StepState{}
	}
	return j, nil
}

func saveJournal(path string, j Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// WriteFileAtomic replaces path with data so that a crash leaves the old
// content or the new one: a temporary file in the same directory, synced,
// renamed over path, and the directory synced so that the rename itself
// survives a power loss.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name()) // the temporary file only; path is untouched
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
