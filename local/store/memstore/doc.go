// Package memstore is the in-memory stand-in for the DynamoDB store
// (adapters/store), the one fake that the tests of the API, the client, the
// engine task, the planner, the executors and the gateway share. It has
// the store's method names and types, so that it serves wherever
// *store.Store does.
//
// It keeps the DynamoDB store's rules that callers rely on, and the
// contract test (local/store/storecontract) runs the same cases against
// both, so that the fake cannot drift from DynamoDB:
//   - version conditions: a write of a rollout, a target, a selection or a
//     release states the version it read; a stale one is rollout.ErrConflict
//     and writes nothing;
//   - the lock: one active rollout per fleet and kind; creating a second is
//     rollout.ErrConflict;
//   - paging: listings come in the store's order, a page holds at most the
//     limit, tokens are opaque and follow to the end with no duplicates or
//     omissions, and a token the store did not issue wraps page.ErrBadToken;
//   - transactions: a write of a rollout with its targets and events is all
//     or nothing;
//   - keys: an empty key value, or one over 1,024 bytes, is refused as
//     DynamoDB refuses it (a ValidationException, a 500 in the API);
//   - the gateway's agents: a report keeps what others own (the fleet, the
//     assignment error, the desired state), a report or a disconnect of a
//     connection the agent replaced writes nothing, and the lagging index
//     lists exactly the agents whose desired hash or package offer is
//     neither delivered (acknowledged, or a hash newly reported) nor what
//     the agent reports;
//   - credentials: digests only; a binding succeeds once, a rotation's offer
//     goes to the holder of the current credential and becomes it when
//     presented;
//   - leases: a gateway task's lease belongs to the process that took it
//     (another is rollout.ErrConflict) until it ends it.
//
// Its limits: no capacity, throttling or eventual consistency (every read
// sees every write at once), no item size limit, no decoding of stored
// items, no large-pass chain of transactions, and page tokens are offsets
// (a token of one listing given to another is not always refused). For the
// gateway: no batch write (SaveAgents: a gateway over this store writes
// one agent per call), a version is the agent's write counter, which a
// write neither checks nor needs (it always merges as the store does after
// a lost race), and the lagging index lists no versions, so a poll reads
// every changed agent again; its page token is the last id listed.
//
// Tests arrange and inspect its state through the exported fields while
// holding Lock, and make a method fail with Fail.
package memstore
