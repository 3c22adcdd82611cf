package memstore_test

import (
	"testing"

	"github.com/myriarch/myriarch/pkg/store/memstore"
	"github.com/myriarch/myriarch/pkg/store/storecontract"
)

// TestContract holds the in-memory store to the DynamoDB store's rules;
// pkg/store runs the same cases on DynamoDB Local.
func TestContract(t *testing.T) {
	storecontract.Run(t, func(*testing.T) storecontract.Store { return memstore.New() })
}
