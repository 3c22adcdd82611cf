package clienttest

import (
	"context"
	"fmt"
	"sync"

	"github.com/myriarch/myriarch/pkg/releases"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// releaseCatalogue is the stored release catalogue with the conditions of
// the DynamoDB store: a write states the revision it read.
type releaseCatalogue struct {
	mu    sync.Mutex
	items map[string]releases.Release // by Key()
}

func (c *releaseCatalogue) ReleasesOf(_ context.Context, d string) ([]releases.Release, error) {
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

func (c *releaseCatalogue) GetRelease(_ context.Context, d, v string) (*releases.Release, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[d+"/"+v]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

func (c *releaseCatalogue) PutRelease(_ context.Context, r releases.Release, prev int64) error {
	if err := releases.Check(r); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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

func (c *releaseCatalogue) DeleteRelease(_ context.Context, d, v string, prev int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[d+"/"+v]
	if !ok || r.Revision != prev {
		return fmt.Errorf("delete release %s/%s: %w", d, v, rollout.ErrConflict)
	}
	delete(c.items, d+"/"+v)
	return nil
}
