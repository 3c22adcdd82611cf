package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// RolloutEvent is the schema RolloutEvent: a rollout notification.
type RolloutEvent = schema.RolloutEvent

// EventList is the schema EventList: a page of the feed and where the next
// one starts.
type EventList = schema.EventList

// EventQuery selects a page of the feed (listEvents): one rollout's events
// by version, or every event (Fleet: one fleet's) by time, after a cursor
// or, without one, since a time.
type EventQuery struct {
	Rollout, Fleet string
	After          string
	Since          time.Time
	Limit          int
}

// ListEvents reads one page of the feed.
func (c *Client) ListEvents(ctx context.Context, q EventQuery) (EventList, error) {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("rollout", q.Rollout)
	set("fleet", q.Fleet)
	set("after", q.After)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var l EventList
	return l, c.get(ctx, "/api/v1/events", v, &l)
}
