package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// Tables are the deployed DynamoDB tables by base name (tables.Agents.Name ...).
type Tables map[string]awsdynamodb.Table

// tablePrefix names the stage's tables: myriarch-<stage>-agents ... The
// functions and the gateway get the prefix (MYRIARCH_TABLE_PREFIX) and name
// the tables with tables.WithPrefix, exactly as the store's tests do.
func tablePrefix(c Config) string { return "myriarch-" + c.Stage + "-" }

// newTables builds every table of the store's single definition
// (adapters/store/tables): on-demand, point-in-time recovery, the streams and
// the time to live it declares, deletion protection and retention unless
// switched off.
func newTables(scope constructs.Construct, c Config) Tables {
	out := Tables{}
	removal := awscdk.RemovalPolicy_RETAIN
	if !c.DeletionProtection {
		removal = awscdk.RemovalPolicy_DESTROY
	}
	for _, def := range tables.All() {
		props := &awsdynamodb.TableProps{
			TableName:    jsii.String(tablePrefix(c) + def.Name),
			PartitionKey: attribute(def.PartitionKey),
			SortKey:      optionalAttribute(def.SortKey),
			BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			DeletionProtection: jsii.Bool(c.DeletionProtection),
			RemovalPolicy:      removal,
		}
		if def.Stream != "" {
			props.Stream = streamView(def.Stream)
		}
		if def.TTL != "" {
			props.TimeToLiveAttribute = jsii.String(def.TTL)
		}
		t := awsdynamodb.NewTable(scope, jsii.String("Table-"+def.Name), props)
		for _, ix := range def.Indexes {
			gsi := &awsdynamodb.GlobalSecondaryIndexProps{
				IndexName:      jsii.String(ix.Name),
				PartitionKey:   attribute(ix.PartitionKey),
				SortKey:        optionalAttribute(ix.SortKey),
				ProjectionType: projection(ix.Projection),
			}
			if len(ix.NonKeyAttributes) > 0 {
				gsi.NonKeyAttributes = jsii.Strings(ix.NonKeyAttributes...)
			}
			t.AddGlobalSecondaryIndex(gsi)
		}
		out[def.Name] = t
	}
	return out
}

func attribute(k tables.Key) *awsdynamodb.Attribute {
	t := awsdynamodb.AttributeType_STRING
	if k.Type == tables.Number {
		t = awsdynamodb.AttributeType_NUMBER
	}
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: t}
}

func optionalAttribute(k *tables.Key) *awsdynamodb.Attribute {
	if k == nil {
		return nil
	}
	return attribute(*k)
}

// projection maps an index projection; one the app does not know stops the
// synthesis rather than deploying an index that projects something else.
func projection(p tables.Projection) awsdynamodb.ProjectionType {
	switch p {
	case tables.ProjectAll:
		return awsdynamodb.ProjectionType_ALL
	case tables.ProjectKeysOnly:
		return awsdynamodb.ProjectionType_KEYS_ONLY
	case tables.ProjectInclude:
		return awsdynamodb.ProjectionType_INCLUDE
	}
	panic(fmt.Sprintf("index projection %q of adapters/store/tables is not mapped in infra/tables.go", p))
}

// streamView maps the definition's stream view; one the app does not know
// stops the synthesis rather than deploying a table without its stream.
func streamView(v tables.StreamView) awsdynamodb.StreamViewType {
	switch v {
	case tables.NewAndOldImages:
		return awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	case tables.NewImage:
		return awsdynamodb.StreamViewType_NEW_IMAGE
	}
	panic(fmt.Sprintf("stream view %q of adapters/store/tables is not mapped in infra/tables.go", v))
}
