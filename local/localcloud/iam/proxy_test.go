package iam

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"
)

// backend stands for a service: it answers an empty JSON object and keeps
// the bodies it received.
type backend struct {
	mu     sync.Mutex
	bodies []string
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.bodies = append(b.bodies, string(body))
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	io.WriteString(w, "{}")
}

func (b *backend) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bodies...)
}

type fixture struct {
	url      string
	dynamodb *backend
	lambda   *backend
	record   *Recorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rec, err := NewRecorder("")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dynamodb: &backend{}, lambda: &backend{}, record: rec}
	proxy := &Proxy{Policies: testPolicies(t), Evaluator: evaluator, Record: rec,
		Backends: map[string]http.Handler{"dynamodb": f.dynamodb, "lambda": f.lambda, "monitoring": &backend{}}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// config is what a process of the local cloud gets: its role's logical id
// as access key id, and the proxy as endpoint.
func (f *fixture) config(role string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(role, "local", "")}
}

func key(k string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"k": &ddbtypes.AttributeValueMemberS{Value: k}}
}

// wantDenied checks that the SDK reports AccessDenied with AWS's message.
func wantDenied(t *testing.T, err error, code, message string) {
	t.Helper()
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != code || !strings.Contains(api.ErrorMessage(), message) {
		t.Fatalf("err = %v; want %s with %q", err, code, message)
	}
}

func TestProxy_GrantedCallReachesTheBackend(t *testing.T) {
	f := newFixture(t)
	db := dynamodb.NewFromConfig(f.config("Roleengine"))
	if _, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("agents"), Key: key("a1")}); err != nil {
		t.Fatal(err)
	}
	got := f.dynamodb.received()
	if len(got) != 1 || !strings.Contains(got[0], `"TableName":"agents"`) || !strings.Contains(got[0], `"a1"`) {
		t.Fatalf("the backend received %q", got)
	}
}

func TestProxy_CallOutsideTheGrantIsAccessDenied(t *testing.T) {
	f := newFixture(t)
	db := dynamodb.NewFromConfig(f.config("Roleengine"))
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("targets"), Item: key("t1")})
	wantDenied(t, err, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/Test-Roleengine/local is not authorized to perform: "+
		"dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:123456789012:table/targets because no identity-based policy allows the dynamodb:PutItem action")
	var denied *ddbtypes.ResourceNotFoundException
	if errors.As(err, &denied) || len(f.dynamodb.received()) != 0 {
		t.Fatalf("the denied call reached the backend: %v", f.dynamodb.received())
	}
	if d := f.record.Denials(); len(d) != 1 || d[0] != (Call{Role: "Roleengine", Action: "dynamodb:PutItem", Resource: table + "targets"}) {
		t.Errorf("denials: %+v", d)
	}
}

func TestProxy_ExplicitDenyIsSaid(t *testing.T) {
	f := newFixture(t)
	db := dynamodb.NewFromConfig(f.config("Roleengine"))
	_, err := db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String("agents"), Key: key("a1")})
	wantDenied(t, err, "AccessDeniedException", "with an explicit deny in an identity-based policy")
}

func TestProxy_TransactionNeedsConditionCheckItem(t *testing.T) {
	f := newFixture(t)
	db := dynamodb.NewFromConfig(f.config("Roleengine"))
	put := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String("rollouts"), Item: key("r1")}}
	check := ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("rollouts"), Key: key("r1"),
		ConditionExpression: aws.String("attribute_exists(k)")}}
	if _, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put}}); err != nil {
		t.Fatalf("a granted transaction: %v", err)
	}
	_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put, check}})
	wantDenied(t, err, "AccessDeniedException", "dynamodb:ConditionCheckItem on resource: "+table+"rollouts")
}

func TestProxy_QueryOnAnIndexNeedsTheIndexGrant(t *testing.T) {
	f := newFixture(t)
	db := dynamodb.NewFromConfig(f.config("Roleengine"))
	query := func(index *string) error {
		_, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("agents"), IndexName: index,
			KeyConditionExpression: aws.String("k = :k"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":k": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
		return err
	}
	if err := query(aws.String("assignment")); err != nil {
		t.Fatalf("the granted index: %v", err)
	}
	wantDenied(t, query(nil), "AccessDeniedException", "dynamodb:Query on resource: "+table+"agents ")
	wantDenied(t, query(aws.String("lagging")), "AccessDeniedException", "dynamodb:Query on resource: "+table+"agents/index/lagging")
}

func TestProxy_StreamsRecordsOfDynamoDBLocal(t *testing.T) {
	f := newFixture(t)
	streams := dynamodbstreams.NewFromConfig(f.config("Roleengine"))
	iterator := "arn:aws:dynamodb:ddblocal:000000000000:table/agents/stream/2026-01-01T00:00:00.000|001|c2hhcmQ="
	if _, err := streams.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(iterator)}); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(iterator, "agents", "rollouts", 1)
	_, err := streams.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(other)})
	wantDenied(t, err, "AccessDeniedException", "dynamodb:GetRecords on resource: "+table+"rollouts/stream/2026-01-01T00:00:00.000")
}

func TestProxy_LambdaInvoke(t *testing.T) {
	f := newFixture(t)
	fn := lambda.NewFromConfig(f.config("Roleengine"))
	if _, err := fn.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("Test-Functionplanner"), Payload: []byte(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	if got := f.lambda.received(); len(got) != 1 || got[0] != `{"a":1}` {
		t.Fatalf("the backend received %q", got)
	}
	_, err := fn.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("Test-Functionengine")})
	wantDenied(t, err, "AccessDeniedException", "lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:123456789012:function:Test-Functionengine")
}

func TestProxy_CloudWatchDenialInItsProtocol(t *testing.T) {
	f := newFixture(t)
	cw := cloudwatch.NewFromConfig(f.config("Roleengine"))
	_, err := cw.DescribeAlarms(context.Background(), &cloudwatch.DescribeAlarmsInput{})
	// CloudWatch is query-compatible: its SDK reports the query code.
	wantDenied(t, err, "AccessDenied", "cloudwatch:DescribeAlarms on resource: *")
}

func TestProxy_UnknownRoleAndOperationAreDeniedAndRecorded(t *testing.T) {
	f := newFixture(t)
	_, err := dynamodb.NewFromConfig(f.config("Nobody")).GetItem(context.Background(),
		&dynamodb.GetItemInput{TableName: aws.String("agents"), Key: key("a1")})
	wantDenied(t, err, "AccessDeniedException", `the access key id "Nobody" is not the logical id of a role`)
	_, err = dynamodb.NewFromConfig(f.config("Roleengine")).ExecuteStatement(context.Background(),
		&dynamodb.ExecuteStatementInput{Statement: aws.String("SELECT * FROM agents")})
	wantDenied(t, err, "AccessDeniedException", "the local cloud does not know the DynamoDB operation ExecuteStatement")
	denials := f.record.Denials()
	if len(denials) != 2 || denials[0].Role != "Nobody" || denials[1].Action != "DynamoDB_20120810.ExecuteStatement" || denials[1].Error == "" {
		t.Errorf("denials: %+v", denials)
	}
	if len(f.dynamodb.received()) != 0 {
		t.Error("a refused call reached the backend")
	}
}
