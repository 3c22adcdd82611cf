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
		{name: "GetItem", service: "dynamodb", req: jsonRequest("DynamoDB_20120810.GetItem", ""), body: `{"TableName":"agents"}`,
			want: []Access{{"dynamodb:GetItem", table + "agents"}}},
		{name: "Query on an index", service: "dynamodb", req: jsonRequest("DynamoDB_20120810.Query", ""), body: `{"TableName":"agents","IndexName":"assignment"}`,
			want: []Access{{"dynamodb:Query", table + "agents/index/assignment"}}},
		{name: "BatchGetItem per table", service: "dynamodb", req: jsonRequest("DynamoDB_20120810.BatchGetItem", ""), body: `{"RequestItems":{"targets":{},"agents":{}}}`,
			want: []Access{{"dynamodb:BatchGetItem", table + "agents"}, {"dynamodb:BatchGetItem", table + "targets"}}},
		{name: "TransactWriteItems per item kind", service: "dynamodb", req: jsonRequest("DynamoDB_20120810.TransactWriteItems", ""),
			body: `{"TransactItems":[{"Put":{"TableName":"targets"}},{"ConditionCheck":{"TableName":"rollouts"}},{"Update":{"TableName":"rollouts"}},{"Delete":{"TableName":"targets"}},{"Put":{"TableName":"targets"}}]}`,
			want: []Access{{"dynamodb:PutItem", table + "targets"}, {"dynamodb:ConditionCheckItem", table + "rollouts"},
				{"dynamodb:UpdateItem", table + "rollouts"}, {"dynamodb:DeleteItem", table + "targets"}}},
		{name: "TransactGetItems", service: "dynamodb", req: jsonRequest("DynamoDB_20120810.TransactGetItems", ""), body: `{"TransactItems":[{"Get":{"TableName":"agents"}}]}`,
			want: []Access{{"dynamodb:GetItem", table + "agents"}}},
		{name: "DescribeStream of DynamoDB Local", service: "dynamodb", req: jsonRequest("DynamoDBStreams_20120810.DescribeStream", ""),
			body: `{"StreamArn":"arn:aws:dynamodb:ddblocal:000000000000:table/agents/stream/2026-01-01T00:00:00.000"}`,
			want: []Access{{"dynamodb:DescribeStream", table + "agents/stream/2026-01-01T00:00:00.000"}}},
		{name: "GetRecords by its iterator", service: "dynamodb", req: jsonRequest("DynamoDBStreams_20120810.GetRecords", ""),
			body: `{"ShardIterator":"arn:aws:dynamodb:ddblocal:000000000000:table/agents/stream/2026-01-01T00:00:00.000|001|c2hhcmQ="}`,
			want: []Access{{"dynamodb:GetRecords", table + "agents/stream/2026-01-01T00:00:00.000"}}},
		{name: "ListStreams", service: "dynamodb", req: jsonRequest("DynamoDBStreams_20120810.ListStreams", ""), body: `{}`, want: []Access{{"dynamodb:ListStreams", "*"}}},
		{name: "StartExecution", service: "states", req: jsonRequest("AWSStepFunctions.StartExecution", ""), body: `{"stateMachineArn":"arn:sm"}`,
			want: []Access{{"states:StartExecution", "arn:sm"}}},
		{name: "DescribeExecution", service: "states", req: jsonRequest("AWSStepFunctions.DescribeExecution", ""), body: `{"executionArn":"arn:ex"}`,
			want: []Access{{"states:DescribeExecution", "arn:ex"}}},
		{name: "SendTaskSuccess of a known token", service: "states", req: jsonRequest("AWSStepFunctions.SendTaskSuccess", ""), body: `{"taskToken":"issued"}`,
			want: []Access{{"states:SendTaskSuccess", "arn:aws:states:us-east-1:123456789012:stateMachine:sm"}}},
		{name: "SendTaskFailure of an unknown token", service: "states", req: jsonRequest("AWSStepFunctions.SendTaskFailure", ""), body: `{"taskToken":"forged"}`,
			want: []Access{{"states:SendTaskFailure", "*"}}},
		{name: "PutEvents per bus", service: "events", req: jsonRequest("AWSEvents.PutEvents", ""),
			body: `{"Entries":[{"EventBusName":"myriarch-dev"},{},{"EventBusName":"arn:aws:events:us-east-1:123456789012:event-bus/myriarch-dev"}]}`,
			want: []Access{{"events:PutEvents", "arn:aws:events:us-east-1:123456789012:event-bus/myriarch-dev"},
				{"events:PutEvents", "arn:aws:events:us-east-1:123456789012:event-bus/default"}}},
		{name: "GetSecretValue by a known name", service: "secretsmanager", req: jsonRequest("secretsmanager.GetSecretValue", ""), body: `{"SecretId":"known"}`,
			want: []Access{{"secretsmanager:GetSecretValue", "arn:known"}}},
		{name: "GetSecretValue by another name", service: "secretsmanager", req: jsonRequest("secretsmanager.GetSecretValue", ""), body: `{"SecretId":"myriarch/dev/x"}`,
			want: []Access{{"secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:123456789012:secret:myriarch/dev/x-XXXXXX"}}},
		{name: "SendMessage", service: "sqs", req: jsonRequest("AmazonSQS.SendMessage", ""), body: `{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/dlq"}`,
			want: []Access{{"sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:dlq"}}},
		{name: "Invoke by name", service: "lambda", req: httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/planner/invocations", nil), body: "",
			want: []Access{{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:planner"}}},
		{name: "Invoke by ARN with a qualifier", service: "lambda",
			req: httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Aplanner/invocations?Qualifier=live", nil), body: "",
			want: []Access{{"lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:planner:live"}}},
		{name: "CloudWatch in CBOR", service: "monitoring", req: httptest.NewRequest(http.MethodPost, "/service/GraniteServiceVersion20100801/operation/DescribeAlarms", nil), body: "",
			want: []Access{{"cloudwatch:DescribeAlarms", "*"}}},
		{name: "CloudWatch in the query protocol", service: "monitoring", req: httptest.NewRequest(http.MethodPost, "/", nil), body: "Action=PutMetricData&Version=2010-08-01",
			want: []Access{{"cloudwatch:PutMetricData", "*"}}},
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
		{service: "dynamodb", req: jsonRequest("DynamoDB_20120810.ExecuteStatement", ""), body: `{}`},
		{service: "dynamodb", req: jsonRequest("DynamoDBStreams_20120810.GetRecords", ""), body: `{"ShardIterator":"opaque"}`},
		{service: "states", req: jsonRequest("AWSStepFunctions.CreateActivity", ""), body: `{}`},
		{service: "events", req: jsonRequest("AWSEvents.PutRule", ""), body: `{}`},
		{service: "lambda", req: httptest.NewRequest(http.MethodGet, "/2015-03-31/functions/planner", nil), body: ""},
		{service: "monitoring", req: httptest.NewRequest(http.MethodPost, "/service/GraniteServiceVersion20100801/operation/DeleteAlarms", nil), body: ""},
		{service: "s3", req: httptest.NewRequest(http.MethodGet, "/bucket/key", nil), body: ""},
	} {
		if op, err := Derive(testScope, tc.service, tc.req, []byte(tc.body)); err == nil {
			t.Errorf("%s %+v was derived: %+v", tc.service, tc.req.Header.Get("X-Amz-Target"), op)
		}
	}
}
