package esm

import (
	"context"
	"testing"
	"time"
)

// gather runs lane.next on reads sent at the given delays, and returns
// the sizes of the batches it makes.
func gather(t *testing.T, m Mapping, reads [][]record, gaps time.Duration) []int {
	t.Helper()
	l := &lane{p: &Poller{Mapping: m}, in: make(chan []record, len(reads))}
	go func() {
		for i, r := range reads {
			if i > 0 {
				time.Sleep(gaps)
			}
			l.in <- r
		}
		close(l.in)
	}()
	var sizes []int
	for {
		b, ok := l.next(context.Background())
		if !ok {
			return sizes
		}
		sizes = append(sizes, len(b.records))
	}
}

// Without a batching window a batch is what has arrived; with one, what
// arrives within the window from the first record; BatchSize cuts both.
func TestLaneBatches(t *testing.T) {
	reads := [][]record{records(1, 2), records(3), records(4, 5, 6)}
	if got := gather(t, Mapping{BatchSize: 10}, reads, 30*time.Millisecond); len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 3 {
		t.Errorf("no window: batches %v, want one per read [2 1 3]", got)
	}
	if got := gather(t, Mapping{BatchSize: 10, BatchingWindow: time.Second}, reads, 30*time.Millisecond); len(got) != 1 || got[0] != 6 {
		t.Errorf("a 1 s window: batches %v, want [6]", got)
	}
	if got := gather(t, Mapping{BatchSize: 4, BatchingWindow: time.Second}, reads, 30*time.Millisecond); len(got) != 2 || got[0] != 4 || got[1] != 2 {
		t.Errorf("a 1 s window, batches of 4: batches %v, want [4 2]", got)
	}
}
