package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// DeliveryID is the deterministic identity of one call of an external
// executor: the same rollout, agent, attempt and operation give the same id
// on every retry of Start, so that the receiver (a webhook's
// X-Myriarch-Delivery, an AWX job's myriarch_delivery_id) can tell a repeated
// call from a new one. A retry-failed (the next attempt) or a rollback (the
// reset operation) is a new delivery.
//
// It is the hex of SHA-256 over the four values joined by NUL bytes,
// truncated to 32 characters (128 bits): NUL appears in none of them, so
// ("ab", "c") and ("a", "bc") cannot collide. Example:
// DeliveryID("r-1", "a00", 1, "start") is always the same 32 hex digits.
func DeliveryID(rolloutID, agentID string, attempt int, operation string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{rolloutID, agentID, strconv.Itoa(attempt), operation}, "\x00")))
	return hex.EncodeToString(sum[:])[:32]
}
