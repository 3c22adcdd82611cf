package store

import (
	"testing"

	"github.com/myriarch/myriarch/local/store/storecontract"
)

// TestContract runs the contract that the in-memory store
// (local/store/memstore) is held to against DynamoDB Local, so that both
// keep the same rules.
func TestContract(t *testing.T) {
	storecontract.Run(t, func(t *testing.T) storecontract.Store { return newStore(t) })
}
