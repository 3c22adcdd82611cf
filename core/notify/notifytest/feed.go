// Package notifytest is an in-memory outbox for the in-memory stores of
// the tests (adapters/api's, local/client/clienttest): the events of stored
// changes, read as the DynamoDB store's feed reads them.
package notifytest

import (
	"sort"
	"sync"

	"github.com/myriarch/myriarch/core/notify"
)

// Feed holds the events appended to it. It is safe for concurrent use.
type Feed struct {
	mu     sync.Mutex
	events []notify.Event
}

// Append stores the events of the change that wrote version of their
// rollout, stamped as the DynamoDB store stamps them.
func (f *Feed) Append(version int64, es []notify.Event) {
	if len(es) == 0 {
		return
	}
	es = append([]notify.Event(nil), es...)
	notify.Stamp(es, version)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, es...)
}

// Events are every event appended, in the order of the appends.
func (f *Feed) Events() []notify.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]notify.Event(nil), f.events...)
}

// Page reads one page as the DynamoDB store does; a bad cursor wraps
// notify.ErrBadCursor.
func (f *Feed) Page(q notify.Query) (notify.Page, error) {
	after, err := q.Start()
	if err != nil {
		return notify.Page{}, err
	}
	key := notify.FeedKey
	if q.OrderOf() == notify.ByVersion {
		key = func(e notify.Event) string { return notify.SeqKey(e.Rollout.Version, e.Index) }
	}
	var sel []notify.Event
	for _, e := range f.Events() {
		switch {
		case q.Rollout != "" && e.Rollout.ID != q.Rollout, q.Fleet != "" && e.Rollout.Fleet != q.Fleet,
			key(e) <= after, q.OrderOf() == notify.ByVersion && e.Time.Before(q.Since):
			continue
		}
		sel = append(sel, e)
	}
	sort.Slice(sel, func(i, j int) bool { return key(sel[i]) < key(sel[j]) })
	limit := q.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	p := notify.Page{More: len(sel) > limit}
	if p.More {
		sel = sel[:limit]
	}
	p.Items = sel
	last := after
	if len(sel) > 0 {
		last = key(sel[len(sel)-1])
	}
	p.Next = q.Next(last, p.More)
	return p, nil
}
