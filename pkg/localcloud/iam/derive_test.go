package iam

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

var testScope = Scope{Partition: "aws", Region: "us-east-1", Account: "123456789012",
	SecretArn: func(id string) string {
		return DefaultSecretArn(Scope{Partition: "aws", Region: "us-east-1", Account: "123456789012"}, map[string]string{"known": "arn:known"}, id)
	},
	TaskTokenStateMachine: func(tok string) (string, bool) {
		return "arn:aws:states:us-east-1:123456789012:stateMachine:sm", tok == "issued"
	}}

const table = "arn:aws:dynamodb:us-east-1:123456789012:table/"

func jsonRequest(target, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("X-Amz-Target", target)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	return r
}

func TestDerive_Accesses(t *testing.T) {
	for _, tc := range []struct {
		name, service string
		req           *http.Request
		body          string
		want          []Access
	}{
		{"GetItem", "dynamodb", jsonRequest("DynamoDB_20120810.GetItem", ""), `{"TableName":"agents"}`,
			[]Access{{"dynamodb:GetItem", table + "agents"}}},
		{"Query on an index", "dynamodb", jsonRequest("DynamoDB_20120810.Query", ""), `{"TableName":"agents","IndexName":"assignment"}`,
			[]Access{{"dynamodb:Query", table + "agents/index/assignment"}}},
		{"BatchGetItem per table", "dynamodb", jsonRequest("DynamoDB_20120810.BatchGetItem", ""), `{"RequestItems":{"targets":{},"agents":{}}}`,
			[]Access{{"dynamodb:BatchGetItem", table + "agents"}, {"dynamodb:BatchGetItem", table + "targets"}}},
		{"TransactWriteItems per item kind", "dynamodb", jsonRequest("DynamoDB_20120810.TransactWriteItems", ""),
			`{"TransactItems":[{"Put":{"TableName":"targets"}},{"ConditionCheck":{"TableName":"rollouts"}},{"Update":{"TableName":"rollouts"}},{"Delete":{"TableName":"targets"}},{"Put":{"TableName":"targets"}}]}`,
			[]Access{{"dynamodb:PutItem", table + "targets"}, {"dynamodb:ConditionCheckItem", table + "rollouts"},
				{"dynamodb:UpdateItem", table + "rollouts"}, {"dynamodb:DeleteItem", table + "targets"}}},
		{"TransactGetItems", "dynamodb", jsonRequest("DynamoDB_20120810.TransactGetItems", ""), `{"TransactItems":[{"Get":{"TableName":"agents"}}]}`,
			[]Access{{"dynamodb:GetItem", table + "agents"}}},
		{"DescribeStream of DynamoDB Local", "dynamodb", jsonRequest("DynamoDBStreams_20120810.DescribeStream", ""),
			`{"StreamArn":"arn:aws:dynamodb:ddblocal:000000000000:table/agents/stream/2026-01-01T00:00:00.000"}`,
			[]Access{{"dynamodb:DescribeStream", table + "agents/stream/2026-01-01T00:00:00.000"}}},
		{"GetRecords by its iterator", "dynamodb", jsonRequest("DynamoDBStreams_20120810.GetRecords", ""),
			`{"ShardIterator":"arn:aws:dynamodb:ddblocal:000000000000:table/agents/stream/2026-01-01T00:00:00.000|001|c2hhcmQ="}`,
			[]Access{{"dynamodb:GetRecords", table + "agents/stream/2026-01-01T00:00:00.000"}}},
		{"ListStreams", "dynamodb", jsonRequest("DynamoDBStreams_20120810.ListStreams", ""), `{}`, []Access{{"dynamodb:ListStreams", "*"}}},
		{"StartExecution", "states", jsonRequest("AWSStepFunctions.StartExecution", ""), `{"stateMachineArn":"arn:sm"}`,
			[]Access{{"states:StartExecution", "arn:sm"}}},
		{"DescribeExecution", "states", jsonRequest("AWSStepFunctions.DescribeExecution", ""), `{"executionArn":"arn:ex"}`,
			[]Access{{"states:DescribeExecution", "arn:ex"}}},
		{"SendTaskSuccess of a known token", "states", jsonRequest("AWSStepFunctions.SendTaskSuccess", ""), `{"taskToken":"issued"}`,
			[]Access{{"states:SendTaskSuccess", "arn:aws:states:us-east-1:123456789012:stateMachine:sm"}}},
		{"SendTaskFailure of an unknown token", "states", jsonRequest("AWSStepFunctions.SendTaskFailure", ""), `{"taskToken":"forged"}`,
			[]Access{{"states:SendTaskFailure", "*"}}},
		{"PutEvents per bus", "events", jsonRequest("AWSEvents.PutEvents", ""),
			`{"Entries":[{"EventBusName":"myriarch-dev"},{},{"EventBusName":"arn:aws:events:us-east-1:123456789012:event-bus/myriarch-dev"}]}`,
			[]Access{{"events:PutEvents", "arn:aws:events:us-east-1:123456789012:event-bus/myriarch-dev"},
				{"events:PutEvents", "arn:aws:events:us-east-1:123456789012:event-bus/default"}}},
		{"GetSecretValue by a known name", "secretsmanager", jsonRequest("secretsmanager.GetSecretValue", ""), `{"SecretId":"known"}`,
			[]Access{{"secretsmanager:GetSecretValue", "arn:known"}}},
		{"GetSecretValue by another name", "secretsmanager", jsonRequest("secretsmanager.GetSecretValue", ""), `{"SecretId":"myriarch/dev/x"}`,
			[]Access{{"secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:123456789012:secret:myriarch/dev/x-XXXXXX"}}},
		{"SendMessage", "sqs", jsonRequest("AmazonSQS.SendMessage", ""), `{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/dlq"}`,
			[]Access{{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:dlq"}}},
		{"Invoke by name", "lambda", httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/planner/invocations", nil), "",
			[]Access{{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:planner"}}},
		{"Invoke by ARN with a qualifier", "lambda",
			httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Aplanner/invocations?Qualifier=live", nil), "",
			[]Access{{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:planner:live"}}},
		{"CloudWatch in CBOR", "monitoring", httptest.NewRequest(http.MethodPost, "/service/GraniteServiceVersion20100801/operation/DescribeAlarms", nil), "",
			[]Access{{"cloudwatch:DescribeAlarms", "*"}}},
		{"CloudWatch in the query protocol", "monitoring", httptest.NewRequest(http.MethodPost, "/", nil), "Action=PutMetricData&Version=2010-08-01",
			[]Access{{"cloudwatch:PutMetricData", "*"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := Derive(testScope, tc.service, tc.req, []byte(tc.body))
			if err != nil || !reflect.DeepEqual(op.Accesses, tc.want) {
				t.Errorf("got %+v, %v\nwant %+v", op.Accesses, err, tc.want)
			}
		})
	}
}

func TestDerive_UnknownOperationsAreErrors(t *testing.T) {
	for _, tc := range []struct {
		service string
		req     *http.Request
		body    string
	}{
		{"dynamodb", jsonRequest("DynamoDB_20120810.ExecuteStatement", ""), `{}`},
		{"dynamodb", jsonRequest("DynamoDBStreams_20120810.GetRecords", ""), `{"ShardIterator":"opaque"}`},
		{"states", jsonRequest("AWSStepFunctions.CreateActivity", ""), `{}`},
		{"events", jsonRequest("AWSEvents.PutRule", ""), `{}`},
		{"lambda", httptest.NewRequest(http.MethodGet, "/2015-03-31/functions/planner", nil), ""},
		{"monitoring", httptest.NewRequest(http.MethodPost, "/service/GraniteServiceVersion20100801/operation/DeleteAlarms", nil), ""},
		{"s3", httptest.NewRequest(http.MethodGet, "/bucket/key", nil), ""},
	} {
		if op, err := Derive(testScope, tc.service, tc.req, []byte(tc.body)); err == nil {
			t.Errorf("%s %+v was derived: %+v", tc.service, tc.req.Header.Get("X-Amz-Target"), op)
		}
	}
}
