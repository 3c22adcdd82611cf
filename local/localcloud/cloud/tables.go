package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableProperties are the properties of AWS::DynamoDB::Table that become
// the CreateTable call: CloudFormation's names are the API's.
var tableProperties = []string{"TableName", "AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "BillingMode", "ProvisionedThroughput", "DeletionProtectionEnabled"}

// tableIgnored are the properties DynamoDB Local has no use for; any other
// property is an error, so that a new one is not silently dropped.
var tableIgnored = map[string]bool{"PointInTimeRecoverySpecification": true, "SSESpecification": true, "Tags": true, "ContributorInsightsSpecification": true}

// createTables creates every table of the template as CloudFormation would
// (CreateTable, then UpdateTimeToLive) and returns the stream ARN of each
// table with a stream, by logical id, as DynamoDB names it.
func createTables(ctx context.Context, ddb *dynamodb.Client, raw map[string]map[string]any) (map[string]string, error) {
	streams := map[string]string{}
	for id, props := range raw {
		in, ttl, err := createTableInput(props)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", id, err)
		}
		out, err := ddb.CreateTable(ctx, in)
		var exists *types.ResourceInUseException
		switch {
		case errors.As(err, &exists):
			d, derr := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
			if derr != nil {
				return nil, fmt.Errorf("table %s: %w", id, derr)
			}
			out = &dynamodb.CreateTableOutput{TableDescription: d.Table}
		case err != nil:
			return nil, fmt.Errorf("table %s: create: %w", id, err)
		}
		if arn := aws.ToString(out.TableDescription.LatestStreamArn); arn != "" {
			streams[id] = arn
		}
		if ttl != nil {
			if _, err := ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: in.TableName, TimeToLiveSpecification: ttl}); err != nil && !strings.Contains(err.Error(), "already enabled") {
				return nil, fmt.Errorf("table %s: time to live: %w", id, err)
			}
		}
	}
	return streams, nil
}

// deleteTables deletes the tables of the template that exist.
func deleteTables(ctx context.Context, ddb *dynamodb.Client, raw map[string]map[string]any) error {
	for id, props := range raw {
		name, _ := props["TableName"].(string)
		_, err := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var missing *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &missing) {
			return fmt.Errorf("table %s: delete: %w", id, err)
		}
	}
	return nil
}

// createTableInput maps a table's template properties onto CreateTable.
func createTableInput(props map[string]any) (*dynamodb.CreateTableInput, *types.TimeToLiveSpecification, error) {
	pick := map[string]any{}
	for _, k := range tableProperties {
		if v, ok := props[k]; ok {
			pick[k] = v
		}
	}
	for k := range props {
		if !tableIgnored[k] && pick[k] == nil && k != "StreamSpecification" && k != "TimeToLiveSpecification" {
			return nil, nil, fmt.Errorf("property %s is not emulated", k)
		}
	}
	b, err := json.Marshal(pick)
	if err != nil {
		return nil, nil, err
	}
	var in dynamodb.CreateTableInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, nil, err
	}
	if aws.ToString(in.TableName) == "" {
		return nil, nil, errors.New("no TableName: the local cloud needs the names the functions' environment gives")
	}
	if s, ok := props["StreamSpecification"].(map[string]any); ok {
		view, _ := s["StreamViewType"].(string)
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(view)}
	}
	var ttl *types.TimeToLiveSpecification
	if s, ok := props["TimeToLiveSpecification"].(map[string]any); ok && s["Enabled"] == true {
		name, _ := s["AttributeName"].(string)
		ttl = &types.TimeToLiveSpecification{AttributeName: aws.String(name), Enabled: aws.Bool(true)}
	}
	return &in, ttl, nil
}

// rawTables are the tables' properties before resolution: the streams'
// ARNs, which other resources reference, exist only once the tables do.
// Their properties hold no intrinsic in this template (names are plain
// strings); one that does is an error.
func rawTables(raw []byte) (map[string]map[string]any, error) {
	var doc struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for id, r := range doc.Resources {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		if b, _ := json.Marshal(r.Properties); strings.Contains(string(b), `"Fn::`) || strings.Contains(string(b), `"Ref"`) {
			return nil, fmt.Errorf("table %s: its properties use an intrinsic function, which the local cloud resolves only after the tables exist", id)
		}
		out[id] = r.Properties
	}
	return out, nil
}

// templateStreamArn is a stream's ARN as the template's account sees it:
// DynamoDB Local names every ARN with region ddblocal and account
// 000000000000.
func templateStreamArn(local, region, account string) string {
	return strings.Replace(local, "arn:aws:dynamodb:ddblocal:000000000000:", "arn:aws:dynamodb:"+region+":"+account+":", 1)
}
