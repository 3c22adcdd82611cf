package streams

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func rec(item string, seq int) Record {
	return Record{SequenceNumber: fmt.Sprintf("%06d", seq), Keys: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: item}}}
}

// handled collects what lanes handled, per item, in the order handled.
type handled struct {
	mu      sync.Mutex
	byItem  map[string][]string
	batches int
}

func (h *handled) add(recs []Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batches++
	for _, r := range recs {
		id := r.Keys["id"].(*types.AttributeValueMemberS).Value
		h.byItem[id] = append(h.byItem[id], r.SequenceNumber)
	}
}

// The records of one item are handled once each and in their order,
// whichever lane they fall in and however long the other lanes take.
func TestLanes_AnItemsRecordsInOrder(t *testing.T) {
	got := &handled{byItem: map[string][]string{}}
	p := Poller{Lanes: 4, Handler: func(_ context.Context, recs []Record) error {
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		got.add(recs)
		return nil
	}}
	ctx := context.Background()
	ls := p.startLanes(ctx)
	seq := 0
	for read := 0; read < 20; read++ { // 20 reads of 10 records of 30 items
		var recs []Record
		for range 10 {
			seq++
			recs = append(recs, rec(fmt.Sprintf("a%02d", rand.IntN(30)), seq))
		}
		if err := ls.dispatch(ctx, recs, 3); err != nil {
			t.Fatal(err)
		}
	}
	ls.stop()
	total, used := 0, map[int]bool{}
	for id, seqs := range got.byItem {
		used[lane(rec(id, 0).Keys, 4)] = true
		total += len(seqs)
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Fatalf("item %s handled as %v: out of order", id, seqs)
			}
		}
	}
	if total != 200 {
		t.Fatalf("%d records handled, want each of the 200 once", total)
	}
	if len(used) < 2 {
		t.Fatalf("30 items in %d lane(s) of 4: the records are not spread", len(used))
	}
}

// A lane whose handler is busy does not hold the others: they handle what
// is read while it waits.
func TestLanes_ABusyLaneDoesNotHoldTheOthers(t *testing.T) {
	release := make(chan struct{})
	other := make(chan string, 100)
	slow := "a00"
	slowLane := lane(rec(slow, 0).Keys, 4)
	p := Poller{Lanes: 4, Handler: func(_ context.Context, recs []Record) error {
		id := recs[0].Keys["id"].(*types.AttributeValueMemberS).Value
		if lane(recs[0].Keys, 4) == slowLane {
			<-release
			return nil
		}
		other <- id
		return nil
	}}
	ctx := context.Background()
	ls := p.startLanes(ctx)
	defer ls.stop()
	defer close(release)
	if err := ls.dispatch(ctx, []Record{rec(slow, 1)}, 10); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 30; i++ {
		id := fmt.Sprintf("a%02d", i)
		if lane(rec(id, 0).Keys, 4) == slowLane {
			continue
		}
		if err := ls.dispatch(ctx, []Record{rec(id, i+1)}, 10); err != nil {
			t.Fatal(err)
		}
		select {
		case <-other:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s was not handled while the lane of %s was busy", id, slow)
		}
	}
}

// A batch that fails is handled again before anything after it in its lane.
func TestLanes_AFailedBatchIsRetriedFirst(t *testing.T) {
	got := &handled{byItem: map[string][]string{}}
	failures := 0
	p := Poller{Lanes: 2, Interval: time.Millisecond, Handler: func(_ context.Context, recs []Record) error {
		if recs[0].SequenceNumber == "000001" && failures < 2 {
			failures++
			return errors.New("throttled")
		}
		got.add(recs)
		return nil
	}}
	ctx := context.Background()
	ls := p.startLanes(ctx)
	if err := ls.dispatch(ctx, []Record{rec("a", 1), rec("a", 2), rec("a", 3)}, 1); err != nil {
		t.Fatal(err)
	}
	ls.stop()
	if failures != 2 || fmt.Sprint(got.byItem["a"]) != "[000001 000002 000003]" {
		t.Fatalf("after %d failures handled %v, want 000001 retried, then 000002 and 000003", failures, got.byItem["a"])
	}
}
