package stack

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// The API waits up to its plan timeout (10 s) for the planner and answers
// planned: false when the run did not finish by then; the run goes on and
// the fleet shows its rollout later. On a loaded machine a plan can take
// that long, so the demo and the tests do what an operator does: look for
// the rollout among the fleet's rollouts.

// lateRolloutWait bounds the wait for a rollout the planner creates after
// the API stopped waiting for it.
const lateRolloutWait = 2 * time.Minute

// latestRollout is the id of the newest rollout of a fleet and kind ("" if
// none); the list is newest first.
func latestRollout(ctx context.Context, c client, fleet, kind string) (string, error) {
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	q := url.Values{"fleet": {fleet}, "kind": {kind}, "limit": {"1"}}
	if err := c.do(ctx, "GET", "/api/v1/rollouts?"+q.Encode(), nil, &page); err != nil {
		return "", err
	}
	if len(page.Items) == 0 {
		return "", nil
	}
	return page.Items[0].ID, nil
}

// plannedRollout is the rollout a change of fleet and kind created: id, as
// the API answered, or, when the planner had not finished (planned false),
// the first rollout of the fleet and kind newer than before. A finished
// plan without a rollout is an error: the change needed none.
func plannedRollout(ctx context.Context, c client, fleet, kind, before string, planned bool, id string) (string, error) {
	if id != "" {
		return id, nil
	}
	if planned {
		return "", fmt.Errorf("the planner created no %s rollout for fleet %s", kind, fleet)
	}
	wctx, cancel := context.WithTimeout(ctx, lateRolloutWait)
	defer cancel()
	for {
		newest, err := latestRollout(wctx, c, fleet, kind)
		if err == nil && newest != "" && newest != before {
			return newest, nil
		}
		if err := sleep(wctx, 250*time.Millisecond); err != nil {
			return "", fmt.Errorf("the planner had not finished when the API answered, and no %s rollout of fleet %s appeared within %s", kind, fleet, lateRolloutWait)
		}
	}
}
