package memstore

import (
	"context"
	"fmt"

	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/rollout"
)

// ReleasesOf lists the stored releases of a distribution, newest first;
// nothing for a name no release can have (the store sends no request).
func (m *Store) ReleasesOf(_ context.Context, d string) ([]releases.Release, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !releases.ValidDistribution(d) {
		return nil, nil
	}
	var out []releases.Release
	for _, r := range m.Releases {
		if r.Distribution == d {
			out = append(out, r)
		}
	}
	releases.SortNewestFirst(out)
	return out, nil
}

// GetRelease is one stored release; nil when there is none.
func (m *Store) GetRelease(_ context.Context, d, v string) (*releases.Release, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.Releases[d+"/"+v]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

// PutRelease writes a release on the revision it read (0: none stored).
func (m *Store) PutRelease(_ context.Context, r releases.Release, prev int64) error {
	if err := releases.Check(r); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lostRace() || m.Releases[r.Key()].Revision != prev {
		return fmt.Errorf("put release %s: %w", r.Key(), rollout.ErrConflict)
	}
	r.Revision = prev + 1
	m.Releases[r.Key()] = r
	return nil
}

// DeleteRelease deletes a release on the revision it read.
func (m *Store) DeleteRelease(_ context.Context, d, v string, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.Releases[d+"/"+v]
	if m.lostRace() || !ok || r.Revision != prev {
		return fmt.Errorf("delete release %s/%s: %w", d, v, rollout.ErrConflict)
	}
	delete(m.Releases, d+"/"+v)
	return nil
}

// lostRace spends one of ReleaseConflicts.
func (m *Store) lostRace() bool {
	if m.ReleaseConflicts > 0 {
		m.ReleaseConflicts--
		return true
	}
	return false
}
