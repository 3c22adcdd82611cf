package esm

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

func records(seqs ...int) []record {
	var rs []record
	for _, s := range seqs {
		rs = append(rs, record{seq: fmt.Sprint(s), shard: "shard-1", created: time.Unix(int64(s), 0)})
	}
	return rs
}

func seqsOf(b batch) []string {
	var out []string
	for _, r := range b.records {
		out = append(out, r.seq)
	}
	return out
}

// Each row is one attempt's outcome and what follows.
func TestAfter(t *testing.T) {
	cases := []struct {
		name     string
		m        Mapping
		b        batch
		how      result
		failedAt int
		next     [][]string // the batches to try next
		retries  []int      // their retry counts
		failed   []string   // the batch given up
	}{
		{name: "delivered", b: batch{records: records(1, 2)}, how: delivered},
		{name: "throttled: again, uncounted", m: Mapping{MaxRetries: 0}, b: batch{records: records(1, 2)}, how: invokeFailed,
			next: [][]string{{"1", "2"}}, retries: []int{0}},
		{name: "function error: again", m: Mapping{MaxRetries: 2}, b: batch{records: records(1, 2)}, how: functionError,
			next: [][]string{{"1", "2"}}, retries: []int{1}},
		{name: "function error: retries exhausted", m: Mapping{MaxRetries: 2}, b: batch{records: records(1, 2), retries: 2}, how: functionError,
			failed: []string{"1", "2"}},
		{name: "infinite retries", m: Mapping{MaxRetries: -1}, b: batch{records: records(1), retries: 1000}, how: functionError,
			next: [][]string{{"1"}}, retries: []int{1001}},
		{name: "bisect: halves, uncounted", m: Mapping{MaxRetries: 1, Bisect: true}, b: batch{records: records(1, 2, 3), retries: 1}, how: functionError,
			next: [][]string{{"1"}, {"2", "3"}}, retries: []int{1, 1}},
		{name: "bisect: one record is retried", m: Mapping{MaxRetries: 1, Bisect: true}, b: batch{records: records(7)}, how: functionError,
			next: [][]string{{"7"}}, retries: []int{1}},
		{name: "partial: from the first failed", m: Mapping{MaxRetries: 3, Bisect: true}, b: batch{records: records(1, 2, 3, 4)}, how: partialFailure, failedAt: 2,
			next: [][]string{{"3", "4"}}, retries: []int{1}},
		{name: "partial: exhausted", m: Mapping{MaxRetries: 0}, b: batch{records: records(1, 2, 3)}, how: partialFailure, failedAt: 1,
			failed: []string{"2", "3"}},
	}
	for _, c := range cases {
		next, failed := c.m.after(c.b, c.how, c.failedAt)
		var gotNext [][]string
		var gotRetries []int
		for _, b := range next {
			gotNext = append(gotNext, seqsOf(b))
			gotRetries = append(gotRetries, b.retries)
		}
		var gotFailed []string
		if failed != nil {
			gotFailed = seqsOf(*failed)
		}
		if fmt.Sprint(gotNext) != fmt.Sprint(c.next) || !slices.Equal(gotRetries, c.retries) || !slices.Equal(gotFailed, c.failed) {
			t.Errorf("%s: next %v (retries %v), failed %v; want %v (%v), %v", c.name, gotNext, gotRetries, gotFailed, c.next, c.retries, c.failed)
		}
	}
}

func TestExpire(t *testing.T) {
	m := Mapping{MaxRecordAge: 10 * time.Second}
	b := batch{records: records(100, 105, 111)} // created at 100 s, 105 s, 111 s
	keep, old := m.expire(b, time.Unix(116, 0)) // ages 16, 11, 5
	if !slices.Equal(seqsOf(keep), []string{"111"}) || old == nil || !slices.Equal(seqsOf(*old), []string{"100", "105"}) {
		t.Errorf("keep %v, expired %v", seqsOf(keep), old)
	}
	if keep, old := m.expire(b, time.Unix(110, 0)); len(keep.records) != 3 || old != nil { // ages 10, 5, -1: none older than 10
		t.Errorf("at 110 s: keep %v, expired %v", seqsOf(keep), old)
	}
	if keep, old := (Mapping{}).expire(b, time.Unix(1e9, 0)); len(keep.records) != 3 || old != nil {
		t.Errorf("no limit: expired %v", old)
	}
}

func TestFirstFailed(t *testing.T) {
	recs := records(10, 20, 30)
	cases := []struct {
		payload           string
		at                int
		partial, complete bool
	}{
		{payload: ``},                         // no response: success
		{payload: `null`},                     // null: success
		{payload: `{}`},                       // no list: success
		{payload: `{"batchItemFailures":[]}`}, // empty list: success
		{payload: `{"batchItemFailures":[{"itemIdentifier":"30"},{"itemIdentifier":"20"}]}`, at: 1, partial: true}, // the earliest
		{payload: `{"batchItemFailures":[{"itemIdentifier":"99"}]}`, complete: true},                               // not in the batch
		{payload: `{"batchItemFailures":[{"itemIdentifier":""}]}`, complete: true},                                 // empty
		{payload: `{"batchItemFailures":[{"itemIdentifier":null}]}`, complete: true},                               // null
		{payload: `not json`, complete: true},
	}
	for _, c := range cases {
		at, partial, complete := firstFailed([]byte(c.payload), recs)
		if at != c.at || partial != c.partial || complete != c.complete {
			t.Errorf("%s: %d %v %v, want %d %v %v", c.payload, at, partial, complete, c.at, c.partial, c.complete)
		}
	}
}

// A batch is cut at BatchSize and at Lambda's 6 MB payload.
func TestBatchLength(t *testing.T) {
	big := record{json: make([]byte, 2*1024*1024)}
	small := record{json: []byte(`{}`)}
	cases := []struct {
		recs []record
		size int
		want int
	}{
		{recs: []record{small, small, small}, size: 2, want: 2},
		{recs: []record{small, small}, size: 10, want: 2},
		{recs: []record{big, big, big, big}, size: 10, want: 2},                       // a third would pass 6 MB with the separators
		{recs: []record{{json: make([]byte, 7*1024*1024)}, small}, size: 10, want: 1}, // one record always goes
	}
	for i, c := range cases {
		if got := batchLength(c.recs, c.size); got != c.want {
			t.Errorf("case %d: %d, want %d", i, got, c.want)
		}
	}
}

// The on-failure message says where the batch is in the stream.
func TestDescribeFailure(t *testing.T) {
	m := Mapping{FunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:f", StreamARN: "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x"}
	b := batch{records: records(5, 6, 7), invokes: 11}
	raw := m.describeFailure(b, retriesExhausted, "req-1", &lambdas.Result{FunctionError: "Unhandled"}, time.Unix(100, 0))
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"DDBStreamBatchInfo":{"approximateArrivalOfFirstRecord":"1970-01-01T00:00:05.000Z","approximateArrivalOfLastRecord":"1970-01-01T00:00:07.000Z","batchSize":3,"endSequenceNumber":"7","shardId":"shard-1","startSequenceNumber":"5","streamArn":"arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x"},"requestContext":{"approximateInvokeCount":11,"condition":"RetryAttemptsExhausted","functionArn":"arn:aws:lambda:us-east-1:123456789012:function:f","requestId":"req-1"},"responseContext":{"executedVersion":"$LATEST","functionError":"Unhandled","statusCode":200},"timestamp":"1970-01-01T00:01:40.000Z","version":"1.0"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("message\n got %s\nwant %s", b, want)
	}
}
