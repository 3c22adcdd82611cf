package notify

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The feed lists notifications oldest first in one of two orders: every
// event (or a fleet's) by time, or one rollout's by version. Its cursors
// name a position in one of them.

// Query selects a page of the feed. Rollout lists one rollout's events in
// the order of its versions; otherwise Fleet ("" every fleet) lists by
// time. After is a cursor from an earlier page's Next; without it, Since
// (zero: the oldest event kept) is where the page starts.
type Query struct {
	Rollout, Fleet string
	After          string
	Since          time.Time
	Limit          int
	// Horizon bounds the cursor of a time-ordered page that reached the
	// newest event. A change is stored a little after its time (a pass
	// decides, carries out its orders, then writes), so an event of another
	// rollout may still appear before the newest one read. Next then stops
	// at Horizon (now - Settle, set by the reader), and the next page
	// returns the events after it again, late ones included; readers drop
	// the repeats by eventId. Zero: no bound.
	Horizon time.Time
}

// Settle is the longest a change is stored after the time of its events:
// the longest run of the functions that write them (the planner's, 300 s).
const Settle = 5 * time.Minute

// Page is one page of the feed, oldest first. Next is where the next page
// starts, also when this one is empty or reached the newest event (then
// More is false and a later read with Next returns what came since).
type Page struct {
	Items []Event
	Next  string
	More  bool
}

// ErrBadCursor is a cursor the feed did not issue, or one of the other
// order (a rollout's cursor without the rollout, or the other way round).
var ErrBadCursor = errors.New("invalid cursor")

// Order is one of the feed's orders.
type Order string

const (
	ByTime    Order = "t:" // every event or a fleet's: FeedKey
	ByVersion Order = "v:" // one rollout's: SeqKey
)

// OrderOf is the order a query lists in.
func (q Query) OrderOf() Order {
	if q.Rollout != "" {
		return ByVersion
	}
	return ByTime
}

// Cursor is the opaque cursor of a position in an order; "" for none.
func Cursor(o Order, pos string) string {
	if pos == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(string(o) + pos))
}

// Position is the position a cursor names in order o; "" is the start.
func Position(o Order, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(b), string(o)) || len(b) == len(o) {
		return "", fmt.Errorf("%w: %q", ErrBadCursor, cursor)
	}
	return string(b[len(o):]), nil
}

// TimeKey is a time as fixed-width UTC text, so that keys sort like the
// times: 2026-03-02T10:00:00.000000000Z. As a position it comes before
// every event of that instant.
func TimeKey(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// SeqKey orders the events of one rollout: its version, then the index
// (0000000007#000).
func SeqKey(version int64, index int) string { return fmt.Sprintf("%010d#%03d", version, index) }

// FeedKey orders every event by time, then rollout and SeqKey.
func FeedKey(e Event) string {
	return TimeKey(e.Time) + "#" + e.Rollout.ID + "#" + SeqKey(e.Rollout.Version, e.Index)
}

// Start is the position a query starts after: its cursor's, else Since's
// (time order only: a rollout's listing filters on Since instead).
func (q Query) Start() (string, error) {
	pos, err := Position(q.OrderOf(), q.After)
	if err == nil && pos == "" && !q.Since.IsZero() && q.OrderOf() == ByTime {
		pos = TimeKey(q.Since)
	}
	return pos, err
}

// Next is the cursor after a page that ended at position last: in time
// order, a page that reached the newest event stops at the query's
// Horizon (see Query.Horizon).
func (q Query) Next(last string, more bool) string {
	if !more && q.OrderOf() == ByTime && !q.Horizon.IsZero() {
		if h := TimeKey(q.Horizon); last > h {
			last = h
		}
	}
	return Cursor(q.OrderOf(), last)
}
