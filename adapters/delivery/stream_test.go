package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/myriarch/myriarch/adapters/delivery"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/notify/notifytest"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/storetest"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// change stores one change of rollout r-1 (created on the first call) with
// events of the given types, as a pass does.
func change(t *testing.T, st *store.Store, types ...string) {
	t.Helper()
	ctx := context.Background()
	r, ts, err := st.LoadRollout(ctx, "r-1")
	if err != nil {
		r = rollout.Rollout{ID: "r-1", Fleet: "edge", Kind: policy.KindConfig, Status: rollout.Running, ToRef: "h1", Origin: rollout.OriginGitOps,
			CreatedAt: t0, Waves: []rollout.Wave{{Name: "all", Status: rollout.WaveRunning}}}
		ts = []rollout.Target{{RolloutID: "r-1", AgentID: "a1", Status: rollout.TargetPending, Attempt: 1}}
		if err := st.CreateRollout(ctx, r, ts); err != nil {
			t.Fatal(err)
		}
		r, ts, err = st.LoadRollout(ctx, "r-1")
		if err != nil {
			t.Fatal(err)
		}
	}
	var es []engine.Event
	for _, typ := range types {
		es = append(es, engine.Event{Type: typ})
	}
	if err := st.SaveEvaluation(ctx, r, nil, notify.New(r, ts, es, t0)...); err != nil {
		t.Fatal(err)
	}
}

// The local delivery: the events a change writes come out of DynamoDB
// Local's stream, through the poller, at the webhook, as the feed lists
// them; the TTL's deletions never reach it.
func TestPoller_DeliversNotificationsToTheWebhook(t *testing.T) {
	st, names := storetest.NewWithTables(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	desc, err := storetest.Client(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(names.Events)})
	if err != nil {
		t.Fatal(err)
	}
	rcv := &notifytest.Webhook{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	d := delivery.Delivery{Decode: store.DecodeEventImage, Publisher: delivery.Webhook{URL: srv.URL, Backoff: time.Millisecond}}
	ready := make(chan struct{})
	p := streams.Poller{Streams: dynamodbstreams.NewFromConfig(storetest.Config(t)), StreamArn: aws.ToString(desc.Table.LatestStreamArn),
		Name: "event stream", Handler: d.Poll, Interval: 20 * time.Millisecond, Ready: ready}
	go func() { _ = p.Run(ctx) }()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("the poller never reached the stream (is AWS_ENDPOINT_URL_DYNAMODB_STREAMS set?)")
	}
	change(t, st, "rollout.started")
	change(t, st, "rollout.paused")
	change(t, st, "rollout.resumed", "rollout.completed")
	want := []string{"r-1:v2:0", "r-1:v3:0", "r-1:v4:0", "r-1:v4:1"}
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.IDs("")) < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := rcv.IDs(""); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the webhook received %v, want %v", got, want)
	}
	page, err := st.EventsPage(ctx, notify.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var feed []string
	for _, e := range page.Items {
		feed = append(feed, e.EventID)
	}
	if paused := rcv.Accepted()[1].Envelope; fmt.Sprint(feed) != fmt.Sprint(want) || paused.DetailType != "Rollout Paused" || paused.Detail.Rollout.Counts["total"] != 1 {
		t.Fatalf("feed %v, webhook %+v: want the same events, the envelope of each", feed, paused)
	}
}

type bus struct{ calls [][]string }

func (b *bus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	var ids []string
	for _, e := range in.Entries {
		var d notify.Event
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
		ids = append(ids, aws.ToString(e.DetailType)+" "+d.EventID)
	}
	b.calls = append(b.calls, ids)
	if len(b.calls) == 1 {
		return nil, fmt.Errorf("throttled")
	}
	return &eventbridge.PutEventsOutput{Entries: make([]ebtypes.PutEventsResultEntry, len(in.Entries))}, nil
}

// The notify function reads the event items as Lambda hands them over (the
// store's own items, converted) and publishes them; a failed PutEvents
// reports the first record as the batch item failure, and the retry
// publishes them all.
func TestLambda_PublishesTheStoredItems(t *testing.T) {
	st, names := storetest.NewWithTables(t)
	change(t, st, "rollout.started")
	change(t, st, "rollout.rolling_back", "rollout.rolled_back")
	out, err := storetest.Client(t).Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(names.Events)})
	if err != nil || len(out.Items) != 3 {
		t.Fatalf("scan: %d items, %v", len(out.Items), err)
	}
	var ev events.DynamoDBEvent
	for i, it := range sortedBySeq(out.Items) {
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventID: fmt.Sprint(i), EventName: "INSERT",
			Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprintf("%03d", i), NewImage: streams.ToLambda(it), StreamViewType: "NEW_IMAGE"}})
	}
	b := &bus{}
	d := delivery.Delivery{Decode: store.DecodeEventImage, Publisher: delivery.EventBridge{Client: b, Bus: "myriarch-test"}}
	resp, err := d.Lambda(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "000" {
		t.Fatalf("response %+v %v, want the first record reported", resp, err)
	}
	resp, err = d.Lambda(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response %+v %v, want none failed", resp, err)
	}
	want := "[Rollout Started r-1:v2:0 Rollout Rolling Back r-1:v3:0 Rollout Rolled Back r-1:v3:1]"
	if got := fmt.Sprint(b.calls[1]); got != want {
		t.Fatalf("published %s, want %s", got, want)
	}
}

func sortedBySeq(items []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	seq := func(it map[string]types.AttributeValue) string { return it["seq"].(*types.AttributeValueMemberS).Value }
	out := append([]map[string]types.AttributeValue(nil), items...)
	sort.Slice(out, func(i, j int) bool { return seq(out[i]) < seq(out[j]) })
	return out
}
