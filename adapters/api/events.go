package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
)

// listEvents is the feed of rollout notifications, the outbox the
// EventBridge bus is fed from: oldest first, by time, or by version for
// one rollout. A filter that names no possible rollout or fleet matches
// nothing, and the store is not asked.
func (s *server) listEvents(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "rollout", "fleet", "after", "since", "limit")
	if p != nil {
		return 0, nil, p
	}
	limit, _, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	fq := notify.Query{Rollout: q.get("rollout"), Fleet: q.get("fleet"), After: q.get("after"), Limit: limit,
		Horizon: s.Clock().Add(-notify.Settle)}
	if v := q.get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, nil, badRequest("since must be an RFC 3339 time such as 2026-03-02T10:00:00Z, not %q", v)
		}
		fq.Since = t
	}
	out := schema.EventList{Items: []schema.RolloutEvent{}, Next: fq.After}
	if fq.Rollout != "" && !validRolloutID(fq.Rollout) || fq.Fleet != "" && !fleet.ValidName(fq.Fleet) {
		return http.StatusOK, out, nil
	}
	pg, err := s.Store.EventsPage(r.Context(), fq)
	if errors.Is(err, page.ErrBadToken) {
		return 0, nil, badRequest("after is not a cursor this server issued for this listing (a rollout's cursor serves with that rollout only)")
	}
	if err != nil {
		return 0, nil, err
	}
	out.Items = append(out.Items, pg.Items...)
	out.Next, out.More = pg.Next, pg.More
	return http.StatusOK, out, nil
}
