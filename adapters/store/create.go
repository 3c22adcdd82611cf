package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// TableDefinitions are the CreateTable inputs of every table of
// adapters/store/tables, named prefix + base name: on-demand billing, the key
// schemas, the global secondary indexes and the streams (a table's TTL is
// set after its creation: EnableTimeToLive).
func TableDefinitions(prefix string) []dynamodb.CreateTableInput {
	var out []dynamodb.CreateTableInput
	for _, t := range tables.All() {
		attrs := map[string]types.ScalarAttributeType{}
		in := dynamodb.CreateTableInput{
			TableName:   aws.String(prefix + t.Name),
			BillingMode: types.BillingModePayPerRequest,
			KeySchema:   keySchema(t.PartitionKey, t.SortKey, attrs),
		}
		for _, ix := range t.Indexes {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName:  aws.String(ix.Name),
				KeySchema:  keySchema(ix.PartitionKey, ix.SortKey, attrs),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection), NonKeyAttributes: ix.NonKeyAttributes},
			})
		}
		for name, typ := range attrs {
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ})
		}
		if t.Stream != "" {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(t.Stream)}
		}
		out = append(out, in)
	}
	return out
}

func keySchema(pk tables.Key, sk *tables.Key, attrs map[string]types.ScalarAttributeType) []types.KeySchemaElement {
	attrs[pk.Name] = types.ScalarAttributeType(pk.Type)
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk.Name), KeyType: types.KeyTypeHash}}
	if sk != nil {
		attrs[sk.Name] = types.ScalarAttributeType(sk.Type)
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk.Name), KeyType: types.KeyTypeRange})
	}
	return ks
}

// CreateTables creates every table with the prefix and waits until they
// are active: for DynamoDB Local and the tests (the cloud's tables come from
// the CDK app). Tables that exist already keep their items and get the
// indexes added since they were created (a stack kept with DATA= across an
// upgrade), as CloudFormation adds them in the cloud.
func CreateTables(ctx context.Context, client *dynamodb.Client, prefix string) error {
	for _, in := range TableDefinitions(prefix) {
		_, err := client.CreateTable(ctx, &in)
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", *in.TableName, err)
		}
		if err := waitActive(ctx, client, in.TableName); err != nil {
			return err
		}
		if err != nil { // it existed
			if err := addMissingIndexes(ctx, client, in); err != nil {
				return err
			}
		}
	}
	return nil
}

func waitActive(ctx context.Context, client *dynamodb.Client, table *string) error {
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: table}, 2*time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", *table, err)
	}
	return nil
}

// addMissingIndexes creates the indexes of in that the existing table
// lacks, one at a time (DynamoDB takes one index creation per update).
func addMissingIndexes(ctx context.Context, client *dynamodb.Client, in dynamodb.CreateTableInput) error {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", *in.TableName, err)
	}
	have := map[string]bool{}
	for _, ix := range out.Table.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = true
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		if have[aws.ToString(ix.IndexName)] {
			continue
		}
		_, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: in.TableName, AttributeDefinitions: in.AttributeDefinitions,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection}}}})
		if err != nil {
			return fmt.Errorf("add index %s to table %s: %w", aws.ToString(ix.IndexName), *in.TableName, err)
		}
		if err := waitIndexActive(ctx, client, in.TableName, ix.IndexName); err != nil {
			return err
		}
	}
	return nil
}

// waitIndexActive waits until the index is backfilled and queryable.
func waitIndexActive(ctx context.Context, client *dynamodb.Client, table, index *string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: table})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", *table, err)
		}
		for _, ix := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(ix.IndexName) == *index && ix.IndexStatus == types.IndexStatusActive {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("index %s of table %s: not active: %w", *index, *table, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// EnableTimeToLive turns on the TTL of the tables that declare one (the
// events table). CreateTables leaves it off: the tests store events at
// fixed times in the past, which DynamoDB Local would expire at once. The
// local stack, on the wall clock, turns it on as the CDK app does.
func EnableTimeToLive(ctx context.Context, client *dynamodb.Client, prefix string) error {
	for _, t := range tables.All() {
		if t.TTL == "" {
			continue
		}
		_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(prefix + t.Name),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(t.TTL), Enabled: aws.Bool(true)}})
		if err != nil && !ttlAlreadyOn(err) {
			return fmt.Errorf("time to live of table %s: %w", prefix+t.Name, err)
		}
	}
	return nil
}

// ttlAlreadyOn reports the refusal to enable a TTL that is enabled: a table
// CreateTables left as it was.
func ttlAlreadyOn(err error) bool {
	return strings.Contains(err.Error(), "already enabled")
}

// DeleteTables deletes every table with the prefix; missing ones are fine.
func DeleteTables(ctx context.Context, client *dynamodb.Client, prefix string) error {
	var errs []error
	for _, in := range TableDefinitions(prefix) {
		_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: in.TableName})
		var missing *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &missing) {
			errs = append(errs, fmt.Errorf("delete table %s: %w", *in.TableName, err))
		}
	}
	return errors.Join(errs...)
}
