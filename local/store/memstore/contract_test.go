package memstore_test

import (
	"testing"

	"github.com/myriarch/myriarch/local/store/memstore"
	"github.com/myriarch/myriarch/local/store/storecontract"
)

// TestContract holds the in-memory store to the DynamoDB store's rules;
// adapters/store runs the same cases on DynamoDB Local.
func TestContract(t *testing.T) {
	storecontract.Run(t, func(*testing.T) storecontract.Store { return memstore.New() })
}
