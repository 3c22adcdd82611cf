package iam

import (
	"fmt"
	"sort"
	"strings"
)

// dynamodbOps lists the DynamoDB operations whose action is the operation
// on the table named by TableName (or ResourceArn for tagging).
var dynamodbTableOps = map[string]bool{
	"GetItem": true, "PutItem": true, "UpdateItem": true, "DeleteItem": true,
	"Query": true, "Scan": true, "DescribeTable": true, "CreateTable": true, "DeleteTable": true,
	"UpdateTable": true, "DescribeTimeToLive": true, "UpdateTimeToLive": true,
	"DescribeContinuousBackups": true, "UpdateContinuousBackups": true,
	"ListTagsOfResource": true, "TagResource": true, "UntagResource": true,
}

// dynamodbAccountOps are the operations without resource-level
// permissions.
var dynamodbAccountOps = map[string]bool{"ListTables": true, "DescribeLimits": true, "DescribeEndpoints": true}

// dynamodbAccesses: one table (or index, for Query and Scan with
// IndexName) per single-table operation; one access per table of a batch;
// per item of a transaction, the action of that item's kind.
func dynamodbAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	action := "dynamodb:" + op
	switch {
	case dynamodbAccountOps[op]:
		return []Access{{action, "*"}}, nil
	case op == "BatchGetItem" || op == "BatchWriteItem":
		return batchAccesses(s, action, b)
	case op == "TransactWriteItems" || op == "TransactGetItems":
		return transactAccesses(s, b)
	case dynamodbTableOps[op]:
		table := b.str("TableName")
		if table == "" {
			table = b.str("ResourceArn")
		}
		if table == "" {
			return nil, fmt.Errorf("no TableName")
		}
		arn := tableArn(s, table)
		if index := b.str("IndexName"); index != "" && (op == "Query" || op == "Scan") {
			arn += "/index/" + index
		}
		return []Access{{action, arn}}, nil
	}
	return nil, fmt.Errorf("the local cloud does not know the DynamoDB operation %s", op)
}

func tableArn(s Scope, table string) string {
	if strings.HasPrefix(table, "arn:") {
		return s.localArn(table)
	}
	return s.arn("dynamodb", "table/"+table)
}

func batchAccesses(s Scope, action string, b jsonBody) ([]Access, error) {
	items, _ := b["RequestItems"].(map[string]any)
	if len(items) == 0 {
		return nil, fmt.Errorf("no RequestItems")
	}
	tables := make([]string, 0, len(items))
	for t := range items {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	out := make([]Access, len(tables))
	for i, t := range tables {
		out[i] = Access{action, tableArn(s, t)}
	}
	return out, nil
}

// transactKinds maps a transaction item's kind to the action IAM checks.
var transactKinds = map[string]string{
	"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem", "Delete": "dynamodb:DeleteItem",
	"ConditionCheck": "dynamodb:ConditionCheckItem", "Get": "dynamodb:GetItem",
}

func transactAccesses(s Scope, b jsonBody) ([]Access, error) {
	items, _ := b["TransactItems"].([]any)
	if len(items) == 0 {
		return nil, fmt.Errorf("no TransactItems")
	}
	var out []Access
	seen := map[Access]bool{}
	for i, v := range items {
		item, _ := v.(map[string]any)
		if len(item) != 1 {
			return nil, fmt.Errorf("TransactItems[%d] must hold exactly one of Put, Update, Delete, ConditionCheck, Get", i)
		}
		for kind, spec := range item {
			action, ok := transactKinds[kind]
			table := str(mapOf(spec)["TableName"])
			if !ok || table == "" {
				return nil, fmt.Errorf("TransactItems[%d]: unknown kind %q or no TableName", i, kind)
			}
			a := Access{action, tableArn(s, table)}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// streamsAccesses: DynamoDB Streams names the stream by StreamArn, except
// GetRecords, whose shard iterator starts with the stream ARN and "|"
// (both in AWS and in DynamoDB Local).
func streamsAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	action := "dynamodb:" + op
	switch op {
	case "ListStreams":
		return []Access{{action, "*"}}, nil
	case "DescribeStream", "GetShardIterator":
		arn := b.str("StreamArn")
		if arn == "" {
			return nil, fmt.Errorf("no StreamArn")
		}
		return []Access{{action, s.localArn(arn)}}, nil
	case "GetRecords":
		arn, _, ok := strings.Cut(b.str("ShardIterator"), "|")
		if !ok || !strings.HasPrefix(arn, "arn:") {
			return nil, fmt.Errorf("the ShardIterator does not start with a stream ARN")
		}
		return []Access{{action, s.localArn(arn)}}, nil
	}
	return nil, fmt.Errorf("the local cloud does not know the DynamoDB Streams operation %s", op)
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
