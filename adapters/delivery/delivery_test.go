package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/myriarch/myriarch/adapters/streams"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/notify/notifytest"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func event(i int) notify.Event {
	return notify.Event{EventID: notify.ID("r-1", int64(i+2), 0), Type: "rollout.paused", Time: t0.Add(time.Duration(i) * time.Second),
		Reason: "paused by Dana", Rollout: notify.Summary{ID: "r-1", Version: int64(i + 2), Fleet: "edge", Kind: "config", Status: "paused"}}
}

// record is an insert whose image holds only the event's id: decode reads it.
func record(i int) streams.Record {
	return streams.Record{EventName: "INSERT", SequenceNumber: fmt.Sprintf("seq-%02d", i),
		New: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}}
}

func decode(av map[string]types.AttributeValue) (notify.Event, error) {
	var i int
	if _, err := fmt.Sscan(av["id"].(*types.AttributeValueMemberS).Value, &i); err != nil {
		return notify.Event{}, errors.New("not an event")
	}
	return event(i), nil
}

// recorder publishes up to limit events (negative: all), then fails.
type recorder struct {
	got   []string
	limit int
}

func (r *recorder) Publish(_ context.Context, es []notify.Event) (int, error) {
	for i, e := range es {
		if r.limit >= 0 && len(r.got) >= r.limit {
			return i, errors.New("throttled")
		}
		r.got = append(r.got, e.EventID)
	}
	return len(es), nil
}

func TestDelivery_Handle(t *testing.T) {
	removed := streams.Record{EventName: "REMOVE", SequenceNumber: "seq-ttl", Old: record(9).New}
	bad := streams.Record{EventName: "INSERT", SequenceNumber: "seq-bad", New: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "x"}}}
	tests := []struct {
		name       string
		recs       []streams.Record
		limit      int
		published  []string
		wantFailed string
	}{
		{name: "inserts in order, the TTL's deletions skipped", recs: []streams.Record{record(0), removed, record(1)}, limit: -1,
			published: []string{"r-1:v2:0", "r-1:v3:0"}, wantFailed: ""},
		{name: "the publisher stops: resume at the first not published", recs: []streams.Record{record(0), record(1), record(2)}, limit: 1,
			published: []string{"r-1:v2:0"}, wantFailed: "seq-01"},
		{name: "a record that does not decode: the ones before, then resume at it", recs: []streams.Record{record(0), bad, record(2)}, limit: -1,
			published: []string{"r-1:v2:0"}, wantFailed: "seq-bad"},
		{name: "nothing to publish", recs: []streams.Record{removed}, limit: -1, published: nil, wantFailed: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recorder{limit: tt.limit}
			failed, err := Delivery{Decode: decode, Publisher: p}.Handle(context.Background(), tt.recs)
			if fmt.Sprint(p.got) != fmt.Sprint(tt.published) || failed != tt.wantFailed || (err != nil) != (tt.wantFailed != "") {
				t.Errorf("published %v, failed %q (%v); want %v, failed %q", p.got, failed, err, tt.published, tt.wantFailed)
			}
		})
	}
}

// fakeBus records PutEvents calls and refuses the entries named in refuse.
type fakeBus struct {
	calls  [][]ebtypes.PutEventsRequestEntry
	refuse map[string]bool // by eventId in the detail
}

func (f *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	f.calls = append(f.calls, in.Entries)
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		var d notify.Event
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
		r := ebtypes.PutEventsResultEntry{EventId: aws.String("eb-" + d.EventID)}
		if f.refuse[d.EventID] {
			r = ebtypes.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("try again")}
		}
		out.Entries = append(out.Entries, r)
	}
	return out, nil
}

func TestEventBridge_PutsTenAtATimeInOrder(t *testing.T) {
	es := make([]notify.Event, 23)
	for i := range es {
		es[i] = event(i)
	}
	bus := &fakeBus{refuse: map[string]bool{es[14].EventID: true}}
	n, err := EventBridge{Client: bus, Bus: "myriarch-test"}.Publish(context.Background(), es)
	if n != 14 || err == nil || len(bus.calls) != 2 || len(bus.calls[0]) != 10 || len(bus.calls[1]) != 10 {
		t.Fatalf("published %d (%v) in %d calls, want 14 in 2 calls of 10, stopping at the refused entry", n, err, len(bus.calls))
	}
	got, err := json.MarshalIndent(bus.calls[0][0], "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/put-events-entry.json")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(got, &a)
	if err := json.Unmarshal(want, &b); err != nil || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("entry\n%s\nwant (testdata/put-events-entry.json)\n%s", got, want)
	}
	if n, err := (EventBridge{Client: &fakeBus{}, Bus: "b"}).Publish(context.Background(), es[:3]); n != 3 || err != nil {
		t.Errorf("published %d %v, want 3", n, err)
	}
}

func TestWebhook(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		calls    int
		accepted []string
	}{
		{name: "accepted at once", statuses: nil, calls: 2, accepted: []string{"r-1:v2:0", "r-1:v3:0"}},
		{name: "503 and 429 are retried", statuses: []int{503, 429}, calls: 4, accepted: []string{"r-1:v2:0", "r-1:v3:0"}},
		{name: "a refusal is not retried: the event is lost, the next goes", statuses: []int{400}, calls: 2, accepted: []string{"r-1:v3:0"}},
		{name: "a receiver that stays down loses the event after 3 attempts", statuses: []int{500, 500, 500}, calls: 4, accepted: []string{"r-1:v3:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcv := &notifytest.Webhook{Statuses: tt.statuses}
			srv := httptest.NewServer(rcv)
			defer srv.Close()
			w := Webhook{URL: srv.URL, Attempts: 3, Backoff: time.Millisecond}
			n, err := w.Publish(context.Background(), []notify.Event{event(0), event(1)})
			got := rcv.IDs("")
			if n != 2 || err != nil || rcv.Calls() != tt.calls || fmt.Sprint(got) != fmt.Sprint(tt.accepted) {
				t.Errorf("published %d %v, %d calls, accepted %v; want 2, %d calls, %v", n, err, rcv.Calls(), got, tt.calls, tt.accepted)
			}
			if calls := rcv.Accepted(); len(calls) > 0 {
				env, h := calls[0].Envelope, calls[0].Header
				if env.Source != "myriarch" || env.DetailType != "Rollout Paused" || h.Get("Content-Type") != "application/json" ||
					h.Get("X-Myriarch-Event-Id") != env.Detail.EventID || h.Get("X-Myriarch-Event-Type") != "rollout.paused" {
					t.Errorf("envelope %+v headers %v", env, h)
				}
			}
		})
	}
}

func TestWebhook_StopsWithItsContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err := Webhook{URL: srv.URL, Attempts: 100, Backoff: 20 * time.Millisecond}.Publish(ctx, []notify.Event{event(0)})
	if n != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("published %d %v, want 0 and the context's error (the stream delivers it again)", n, err)
	}
}
