package schema

import "github.com/myriarch/myriarch/core/notify"

// RolloutEvent is the schema RolloutEvent: a rollout notification, as the
// EventBridge bus carries it in its detail (core/notify).
type RolloutEvent = notify.Event

// EventList is the schema EventList: a page of the feed, oldest first.
// Next is the cursor to pass as after for the events that follow, also when
// the page is empty or reached the newest event (More false): reading with
// it later returns what came since.
type EventList struct {
	Items []RolloutEvent `json:"items"`
	Next  string         `json:"next"`
	More  bool           `json:"more"`
}
