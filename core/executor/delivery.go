package executor

import (
	"strconv"

	"github.com/google/uuid"
)

// deliveryNamespace is the namespace of the name-based delivery ids.
var deliveryNamespace = uuid.MustParse("6f1c5b1e-3d2a-5c47-9a0e-4b8d2f7c1a93")

// DeliveryID is the deterministic identity of one call of an external
// executor: the same rollout, agent, attempt and operation give the same id
// on every retry of Start, so that the receiver (a webhook's
// X-Myriarch-Delivery, an AWX job's myriarch_delivery_id) can tell a repeated
// call from a new one. A retry-failed (the next attempt) or a rollback (the
// reset operation) is a new delivery.
//
// It is the UUID (version 5, SHA-1) in a fixed namespace of
// "<rollout id>\n<agent id>\n<attempt>\n<operation>": a newline appears in
// none of the values, so ("ab", "c") and ("a", "bc") cannot collide.
func DeliveryID(rolloutID, agentID string, attempt int, operation string) string {
	name := rolloutID + "\n" + agentID + "\n" + strconv.Itoa(attempt) + "\n" + operation
	return uuid.NewSHA1(deliveryNamespace, []byte(name)).String()
}
