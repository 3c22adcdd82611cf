package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// Tables kept from an earlier release (make run DATA=) get the indexes
// added since, and keep their items.
func TestCreateTables_AddsMissingIndexes(t *testing.T) {
	t.Parallel()
	c, ctx := dynamo(t), ctxT(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "t" + hex.EncodeToString(b[:]) + "-old-"
	t.Cleanup(func() { _ = DeleteTables(context.Background(), c, prefix) })
	for _, in := range TableDefinitions(prefix) {
		if *in.TableName == prefix+tables.Agents.Name { // as created before byCollector existed
			kept := in.GlobalSecondaryIndexes[:0]
			for _, ix := range in.GlobalSecondaryIndexes {
				if *ix.IndexName != tables.IndexByCollector {
					kept = append(kept, ix)
				}
			}
			in.GlobalSecondaryIndexes = kept
		}
		if _, err := c.CreateTable(ctx, &in); err != nil {
			t.Fatal(err)
		}
	}
	s := New(c, TablesWithPrefix(prefix))
	seed(t, s, agentOf("kept", "edge"))
	must(t, CreateTables(ctx, c, prefix))
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(prefix + tables.Agents.Name)})
	must(t, err)
	found := false
	for _, ix := range out.Table.GlobalSecondaryIndexes {
		found = found || aws.ToString(ix.IndexName) == tables.IndexByCollector
	}
	if !found {
		t.Fatal("the index added since was not created")
	}
	if _, ok, err := s.GetAgent(ctx, "kept"); err != nil || !ok {
		t.Fatalf("the kept table lost its agent: %v %v", ok, err)
	}
	if _, err := s.LinkedUpdaters(ctx, []string{"018f3a10-2233-7444-8555-000000000001"}); err != nil {
		t.Fatalf("the new index cannot be queried: %v", err)
	}
}
