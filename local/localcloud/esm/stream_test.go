package esm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
	"github.com/myriarch/myriarch/local/storetest"
)

// The template's ARNs, which the records must carry, unlike DynamoDB
// Local's.
const (
	templateStream = "arn:aws:dynamodb:eu-west-1:123456789012:table/t/stream/2026-01-01T00:00:00.000"
	functionARN    = "arn:aws:lambda:eu-west-1:123456789012:function:f"
)

// table is a table of the test's own on DynamoDB Local, with a stream of
// new and old images.
type table struct {
	db     *dynamodb.Client
	name   string
	stream string
}

func newTable(t *testing.T) table {
	t.Helper()
	db := storetest.Client(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "esm-" + hex.EncodeToString(b[:])
	out, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return table{db: db, name: name, stream: aws.ToString(out.TableDescription.LatestStreamArn)}
}

// put writes item id with attribute v.
func (tb table) put(t *testing.T, id, v string) {
	t.Helper()
	_, err := tb.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tb.name), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: id}, "v": &types.AttributeValueMemberS{Value: v},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func (tb table) remove(t *testing.T, id string) {
	t.Helper()
	_, err := tb.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(tb.name), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeFunction records the events it gets and answers with answer.
type fakeFunction struct {
	mu       sync.Mutex
	events   []events.DynamoDBEvent
	raw      [][]byte
	failures []json.RawMessage
	answer   func(ev events.DynamoDBEvent) (lambdas.Result, error)
}

func (f *fakeFunction) invoke(_ context.Context, arn string, payload []byte) (lambdas.Result, error) {
	if arn != functionARN {
		return lambdas.Result{}, &lambdas.NotFoundError{Function: arn}
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return lambdas.Result{}, err
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.raw = append(f.raw, payload)
	f.mu.Unlock()
	if f.answer == nil {
		return lambdas.Result{Payload: []byte("null")}, nil
	}
	return f.answer(ev)
}

func (f *fakeFunction) fail(id string, rec json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, rec)
}

// batches are the events' records as "eventName id v" strings, one slice
// per invocation.
func (f *fakeFunction) batches() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]string
	for _, ev := range f.events {
		var b []string
		for _, r := range ev.Records {
			b = append(b, describe(r))
		}
		out = append(out, b)
	}
	return out
}

func (f *fakeFunction) failureCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.failures)
}

func describe(r events.DynamoDBEventRecord) string {
	img := r.Change.NewImage
	if img == nil {
		img = r.Change.OldImage
	}
	return r.EventName + " " + r.Change.Keys["id"].String() + " " + img["v"].String()
}

// run starts a poller of the mapping on the table and stops it when the
// test ends; it returns once the poller is positioned.
func run(t *testing.T, tb table, m Mapping, f *fakeFunction, now func() time.Time) {
	t.Helper()
	m.LogicalID, m.FunctionARN, m.StreamARN = "Mapping", functionARN, templateStream
	ready := make(chan struct{})
	p := &Poller{
		Mapping: m, Streams: dynamodbstreams.NewFromConfig(storetest.Config(t)), Invoke: f.invoke, Failures: f.fail,
		ReadARN: tb.stream, Now: now, Interval: 20 * time.Millisecond, Ready: ready,
		Backoff: func(int) time.Duration { return time.Millisecond },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the poller stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the poller was not positioned within 10 s")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 10 s", what)
}

// The function gets Lambda's DynamoDB event: every field of
// events.DynamoDBEvent set as Lambda sets it, with the template's stream
// ARN and region, and the JSON round-trips through the type.
func TestPoller_EventShape(t *testing.T) {
	tb := newTable(t)
	f := &fakeFunction{}
	run(t, tb, Mapping{BatchSize: 10, StartingPosition: "LATEST", MaxRetries: -1, Parallelization: 1}, f, time.Now)
	tb.put(t, "a", "1")
	tb.put(t, "a", "2")
	tb.remove(t, "a")
	waitFor(t, "three records", func() bool { return len(slices.Concat(f.batches()...)) == 3 })

	if got := slices.Concat(f.batches()...); !slices.Equal(got, []string{"INSERT a 1", "MODIFY a 2", "REMOVE a 2"}) {
		t.Errorf("records %v", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var recs []events.DynamoDBEventRecord
	for _, ev := range f.events {
		recs = append(recs, ev.Records...)
	}
	for i, r := range recs {
		c := r.Change
		if r.EventSource != "aws:dynamodb" || r.EventVersion != "1.1" || r.AWSRegion != "eu-west-1" || r.EventSourceArn != templateStream ||
			r.EventID == "" || c.SequenceNumber == "" || c.SizeBytes <= 0 || c.StreamViewType != "NEW_AND_OLD_IMAGES" ||
			c.ApproximateCreationDateTime.IsZero() || time.Since(c.ApproximateCreationDateTime.Time) > time.Minute || c.Keys["id"].String() != "a" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if recs[0].Change.OldImage != nil || recs[1].Change.OldImage["v"].String() != "1" || recs[2].Change.NewImage != nil {
		t.Errorf("images: %+v", recs)
	}
	for _, raw := range f.raw {
		var ev events.DynamoDBEvent
		_ = json.Unmarshal(raw, &ev)
		again, _ := json.Marshal(ev)
		if !jsonEqual(t, raw, again) {
			t.Errorf("the event does not round-trip through events.DynamoDBEvent:\n sent %s\nagain %s", raw, again)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// Records no filter matches are dropped, never delivered.
func TestPoller_FilterDropsRecords(t *testing.T) {
	tb := newTable(t)
	f := &fakeFunction{}
	run(t, tb, Mapping{BatchSize: 10, StartingPosition: "LATEST", MaxRetries: -1, Parallelization: 1,
		Filters: []string{`{"eventName":["INSERT"]}`, `{"dynamodb":{"NewImage":{"v":{"S":["keep"]}}}}`}}, f, time.Now)
	tb.put(t, "a", "1")    // INSERT: delivered
	tb.put(t, "a", "2")    // MODIFY: dropped
	tb.put(t, "a", "keep") // MODIFY matching the second filter: delivered
	tb.remove(t, "a")      // REMOVE: dropped
	tb.put(t, "b", "1")    // INSERT: delivered, after the others
	waitFor(t, "b", func() bool { return slices.Contains(slices.Concat(f.batches()...), "INSERT b 1") })
	if got := slices.Concat(f.batches()...); !slices.Equal(got, []string{"INSERT a 1", "MODIFY a keep", "INSERT b 1"}) {
		t.Errorf("delivered %v", got)
	}
}

// writeThenRun writes n items (id i, v "i"), then runs the mapping from
// the stream's start so that they come in one batch.
func writeThenRun(t *testing.T, n int, m Mapping, f *fakeFunction) table {
	tb := newTable(t)
	for i := range n {
		tb.put(t, fmt.Sprint(i), fmt.Sprint(i))
	}
	m.StartingPosition, m.BatchSize = "TRIM_HORIZON", max(m.BatchSize, n)
	if m.Parallelization == 0 {
		m.Parallelization = 1
	}
	run(t, tb, m, f, time.Now)
	return tb
}

// With ReportBatchItemFailures the batch is retried from the first record
// the function reports, the records before it being done.
func TestPoller_ReportBatchItemFailures(t *testing.T) {
	f := &fakeFunction{}
	calls := 0
	f.answer = func(ev events.DynamoDBEvent) (lambdas.Result, error) {
		calls++
		if calls > 1 {
			return lambdas.Result{Payload: []byte(`{"batchItemFailures":[]}`)}, nil
		}
		// Records 3 and 1 failed: the retry starts at 1.
		resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
			{ItemIdentifier: ev.Records[3].Change.SequenceNumber}, {ItemIdentifier: ev.Records[1].Change.SequenceNumber},
		}}
		b, _ := json.Marshal(resp)
		return lambdas.Result{Payload: b}, nil
	}
	writeThenRun(t, 5, Mapping{ReportBatchItemFailures: true, MaxRetries: 3}, f)
	waitFor(t, "the retry", func() bool { return len(f.batches()) == 2 })
	time.Sleep(100 * time.Millisecond)
	want := [][]string{{"INSERT 0 0", "INSERT 1 1", "INSERT 2 2", "INSERT 3 3", "INSERT 4 4"}, {"INSERT 1 1", "INSERT 2 2", "INSERT 3 3", "INSERT 4 4"}}
	if got := f.batches(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batches\n got %v\nwant %v", got, want)
	}
}

// With BisectBatchOnFunctionError a failing batch is halved until the bad
// record is alone; the good records are delivered once each, in order;
// the bad one, after MaxRetries more attempts, goes to the on-failure
// destination, and the shard moves on.
func TestPoller_BisectThenFailure(t *testing.T) {
	f := &fakeFunction{}
	f.answer = func(ev events.DynamoDBEvent) (lambdas.Result, error) {
		for _, r := range ev.Records {
			if r.Change.Keys["id"].String() == "5" {
				return lambdas.Result{FunctionError: "Unhandled", ErrorType: "errBad", Payload: []byte(`{"errorType":"errBad","errorMessage":"bad"}`)}, nil
			}
		}
		return lambdas.Result{Payload: []byte("null")}, nil
	}
	tb := writeThenRun(t, 8, Mapping{Bisect: true, MaxRetries: 2}, f)
	waitFor(t, "the failure", func() bool { return f.failureCount() == 1 })
	tb.put(t, "after", "x")
	waitFor(t, "the record after", func() bool { return slices.Contains(slices.Concat(f.batches()...), "INSERT after x") })

	want := [][]string{
		{"INSERT 0 0", "INSERT 1 1", "INSERT 2 2", "INSERT 3 3", "INSERT 4 4", "INSERT 5 5", "INSERT 6 6", "INSERT 7 7"}, // fails
		{"INSERT 0 0", "INSERT 1 1", "INSERT 2 2", "INSERT 3 3"},                                                         // delivered
		{"INSERT 4 4", "INSERT 5 5", "INSERT 6 6", "INSERT 7 7"},                                                         // fails
		{"INSERT 4 4", "INSERT 5 5"},                   // fails
		{"INSERT 4 4"},                                 // delivered
		{"INSERT 5 5"}, {"INSERT 5 5"}, {"INSERT 5 5"}, // alone: 1 + MaxRetries attempts
		{"INSERT 6 6", "INSERT 7 7"}, // delivered
		{"INSERT after x"},
	}
	if got := f.batches(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batches\n got %v\nwant %v", got, want)
	}
	var msg struct {
		RequestContext struct {
			Condition              string `json:"condition"`
			ApproximateInvokeCount int    `json:"approximateInvokeCount"`
			FunctionARN            string `json:"functionArn"`
		} `json:"requestContext"`
		Info struct {
			BatchSize int    `json:"batchSize"`
			Start     string `json:"startSequenceNumber"`
			End       string `json:"endSequenceNumber"`
			StreamARN string `json:"streamArn"`
			ShardID   string `json:"shardId"`
		} `json:"DDBStreamBatchInfo"`
	}
	f.mu.Lock()
	_ = json.Unmarshal(f.failures[0], &msg)
	bad := f.events[5].Records[0].Change.SequenceNumber
	f.mu.Unlock()
	if msg.RequestContext.Condition != "RetryAttemptsExhausted" || msg.RequestContext.ApproximateInvokeCount != 6 || msg.RequestContext.FunctionARN != functionARN ||
		msg.Info.BatchSize != 1 || msg.Info.Start != bad || msg.Info.End != bad || msg.Info.StreamARN != templateStream || msg.Info.ShardID == "" {
		t.Errorf("on-failure message %+v", msg)
	}
}

// Without bisect a failing batch is retried whole MaxRetries times, then
// given up.
func TestPoller_RetriesExhausted(t *testing.T) {
	f := &fakeFunction{}
	f.answer = func(events.DynamoDBEvent) (lambdas.Result, error) {
		return lambdas.Result{FunctionError: "Unhandled", ErrorType: "Sandbox.Timedout"}, nil
	}
	writeThenRun(t, 3, Mapping{MaxRetries: 1}, f)
	waitFor(t, "the failure", func() bool { return f.failureCount() == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := len(f.batches()); n != 2 {
		t.Errorf("%d invocations, want 1 + MaxRetries = 2", n)
	}
}

// A throttle is retried and does not count toward MaxRetries.
func TestPoller_ThrottlesDoNotCount(t *testing.T) {
	f := &fakeFunction{}
	calls := 0
	f.answer = func(events.DynamoDBEvent) (lambdas.Result, error) {
		if calls++; calls <= 3 {
			return lambdas.Result{}, &lambdas.ThrottledError{Function: "f"}
		}
		return lambdas.Result{Payload: []byte("null")}, nil
	}
	writeThenRun(t, 2, Mapping{MaxRetries: 0}, f)
	waitFor(t, "delivery", func() bool { return len(f.batches()) == 4 })
	time.Sleep(50 * time.Millisecond)
	if n, failed := len(f.batches()), f.failureCount(); n != 4 || failed != 0 {
		t.Errorf("%d invocations, %d failures; want 4 and 0", n, failed)
	}
}

// Records older than MaxRecordAge go to the on-failure destination without
// an invocation.
func TestPoller_RecordAge(t *testing.T) {
	f := &fakeFunction{}
	tb := newTable(t)
	tb.put(t, "old", "1")
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	run(t, tb, Mapping{BatchSize: 10, StartingPosition: "TRIM_HORIZON", MaxRetries: -1, MaxRecordAge: time.Hour, Parallelization: 1}, f, later)
	waitFor(t, "the failure", func() bool { return f.failureCount() == 1 })
	var msg struct {
		RequestContext struct {
			Condition string `json:"condition"`
		} `json:"requestContext"`
		ResponseContext any `json:"responseContext"`
	}
	f.mu.Lock()
	_ = json.Unmarshal(f.failures[0], &msg)
	f.mu.Unlock()
	if msg.RequestContext.Condition != "RecordAgeExceeded" || msg.ResponseContext != nil || len(f.batches()) != 0 {
		t.Errorf("on-failure message %+v after %d invocations", msg, len(f.batches()))
	}
}

// With lanes, an item's records arrive in order even while another lane's
// batch is failing and retried.
func TestPoller_LanesKeepItemOrder(t *testing.T) {
	f := &fakeFunction{}
	var mu sync.Mutex
	failed := map[string]bool{}
	f.answer = func(ev events.DynamoDBEvent) (lambdas.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		// Every batch fails once: retries must not reorder an item's changes.
		first := ev.Records[0].Change.SequenceNumber
		if !failed[first] {
			failed[first] = true
			return lambdas.Result{FunctionError: "Unhandled"}, nil
		}
		return lambdas.Result{Payload: []byte("null")}, nil
	}
	tb := newTable(t)
	run(t, tb, Mapping{BatchSize: 3, StartingPosition: "LATEST", MaxRetries: -1, Parallelization: 4}, f, time.Now)
	const items, versions = 8, 5
	for v := range versions {
		for i := range items {
			tb.put(t, fmt.Sprint("item", i), fmt.Sprint(v))
		}
	}
	// Every change delivered by a batch's second attempt: the first
	// attempts alone see every change too, before the last retry is made.
	waitFor(t, "every change delivered", func() bool {
		n := 0
		for _, b := range deliveredBatches(f) {
			n += len(b)
		}
		return n == items*versions
	})
	// The delivered sequence of each item (failed attempts left out).
	got := map[string][]string{}
	for _, b := range deliveredBatches(f) {
		for _, r := range b {
			got[r.Change.Keys["id"].String()] = append(got[r.Change.Keys["id"].String()], r.Change.NewImage["v"].String())
		}
	}
	for i := range items {
		id := fmt.Sprint("item", i)
		if fmt.Sprint(got[id]) != "[0 1 2 3 4]" {
			t.Errorf("%s delivered as %v", id, got[id])
		}
	}
}

// deliveredBatches are the batches of invocations that succeeded: each
// batch's second attempt in TestPoller_LanesKeepItemOrder.
func deliveredBatches(f *fakeFunction) [][]events.DynamoDBEventRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	attempts := map[string]int{}
	var out [][]events.DynamoDBEventRecord
	for _, ev := range f.events {
		first := ev.Records[0].Change.SequenceNumber
		if attempts[first]++; attempts[first] == 2 {
			out = append(out, ev.Records)
		}
	}
	return out
}
