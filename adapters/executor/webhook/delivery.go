package webhook

import (
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/executor"
)

// Delivery is the JSON body of every request (docs/executors.md has
// examples). Versions run from FromVersion to ToVersion:
//
//	start   the target's update: its version before → the rollout's version
//	reset   a rollback: the rollout's version → the version before
//	cancel  the started update withdrawn: before → the rollout's version
type Delivery struct {
	Operation string `json:"operation"` // start, reset or cancel
	// DeliveryID is the same for every request of one operation on one
	// target attempt (X-Myriarch-Delivery): a receiver does the work once.
	DeliveryID  string          `json:"deliveryId"`
	Executor    string          `json:"executor"` // the executor object's name
	Rollout     DeliveryRollout `json:"rollout"`
	Agent       DeliveryAgent   `json:"agent"`
	FromVersion string          `json:"fromVersion"`
	ToVersion   string          `json:"toVersion"`
	// Attempt is the target's attempt: 1, then 2 after a retry of a failed
	// target (a new attempt is a new delivery).
	Attempt int `json:"attempt"`
	// SentAt is when this request was sent (the t of the signature); a
	// request sent again carries a later one.
	SentAt time.Time `json:"sentAt"`
}

// DeliveryRollout names the rollout a delivery belongs to.
type DeliveryRollout struct {
	ID     string `json:"id"`
	Fleet  string `json:"fleet"`
	Kind   string `json:"kind"`  // version
	ToRef  string `json:"toRef"` // the rollout's version
	Policy string `json:"policy"`
}

// DeliveryAgent is the collector to update. Host is its host.name; a cancel
// of a superseded rollout knows only the id.
type DeliveryAgent struct {
	ID          string            `json:"id"`
	DisplayName string            `json:"displayName"`
	Host        string            `json:"host"`
	Attributes  map[string]string `json:"attributes"`
}

// delivery builds the body of a call sent at now.
func delivery(c executor.Call, op, objectName string, now time.Time) Delivery {
	t := c.Target
	from, to := t.FromRef, c.Version
	switch {
	case op == executor.OpReset:
		from = t.ToRef
	case op == executor.OpCancel || to == "":
		to = t.ToRef
	}
	attrs := c.Agent.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	a := DeliveryAgent{ID: t.AgentID, Host: attrs[agent.AttrHostName], Attributes: attrs}
	if c.Agent.ID != "" {
		a.DisplayName = c.Agent.DisplayName()
	}
	r := c.Rollout
	return Delivery{
		Operation: op, DeliveryID: executor.DeliveryID(r.ID, t.AgentID, t.Attempt, op), Executor: objectName,
		Rollout: DeliveryRollout{ID: r.ID, Fleet: r.Fleet, Kind: string(r.Kind), ToRef: r.ToRef, Policy: r.Policy.Name},
		Agent:   a, FromVersion: from, ToVersion: to, Attempt: t.Attempt, SentAt: now.UTC(),
	}
}
