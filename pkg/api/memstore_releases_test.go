package api

import (
	"context"
	"fmt"
	"sync"

	"github.com/myriarch/myriarch/pkg/releases"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// memReleases is the stored release catalogue of memStore with the conditions of
// the DynamoDB store: a write states the revision it read.
type memReleases struct {
	mu    sync.Mutex
	items map[string]releases.Release // by Key()
	// conflicts makes the next writes lose a race.
	conflicts int
}

func (c *memReleases) ReleasesOf(_ context.Context, d string) ([]releases.Release, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !releases.ValidDistribution(d) { // as the store: no request for a name no release has
		return nil, nil
	}
	var out []releases.Release
	for _, r := range c.items {
		if r.Distribution == d {
			out = append(out, r)
		}
	}
	releases.SortNewestFirst(out)
	return out, nil
}

func (c *memReleases) GetRelease(_ context.Context, d, v string) (*releases.Release, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[d+"/"+v]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

func (c *memReleases) PutRelease(_ context.Context, r releases.Release, prev int64) error {
	if err := releases.Check(r); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conflicts > 0 {
		c.conflicts--
		return fmt.Errorf("put release %s: %w", r.Key(), rollout.ErrConflict)
	}
	if c.items == nil {
		c.items = map[string]releases.Release{}
	}
	if c.items[r.Key()].Revision != prev {
		return fmt.Errorf("put release %s: %w", r.Key(), rollout.ErrConflict)
	}
	r.Revision = prev + 1
	c.items[r.Key()] = r
	return nil
}

func (c *memReleases) stored(key string) (releases.Release, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[key]
	return r, ok
}

func (c *memReleases) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func (c *memReleases) DeleteRelease(_ context.Context, d, v string, prev int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[d+"/"+v]
	if c.conflicts > 0 {
		c.conflicts--
		ok = false
	}
	if !ok || r.Revision != prev {
		return fmt.Errorf("delete release %s/%s: %w", d, v, rollout.ErrConflict)
	}
	delete(c.items, d+"/"+v)
	return nil
}
