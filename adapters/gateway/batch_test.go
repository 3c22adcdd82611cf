package gateway

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// batchAgents is memAgents as a BatchSaver that records the size of every
// batch; while hold is set, a call waits for it to close, so that writes
// queue up behind it.
type batchAgents struct {
	*memAgents
	mu    sync.Mutex
	sizes []int
	hold  chan struct{}
}

func (b *batchAgents) SaveAgents(ctx context.Context, as []agent.Agent, vs []any) ([]any, []error) {
	b.mu.Lock()
	hold := b.hold
	b.hold = nil
	b.sizes = append(b.sizes, len(as))
	b.mu.Unlock()
	if hold != nil {
		<-hold
	}
	next, errs := make([]any, len(as)), make([]error, len(as))
	for i := range as {
		next[i], errs[i] = b.SaveAgent(ctx, as[i], vs[i])
	}
	return next, errs
}

// With its one store call in flight, the writes that queue meanwhile go in
// one batch; an idle task writes one agent per call.
func TestGateway_QueuedWritesGoInOneBatch(t *testing.T) {
	store := &batchAgents{memAgents: newMemAgents()}
	g, err := New(Config{Now: (&clock{now: t0}).Now, Tokens: []string{token}, StoreConcurrency: 1, WriteWait: time.Minute,
		Logger: slog.New(slog.DiscardHandler)}, store, memConfigs{})
	must(t, err)
	links := make([]*link, 6)
	send := func(i int, version string) {
		uid := make([]byte, 16)
		binary.BigEndian.PutUint64(uid[8:], uint64(i+1))
		m := msg(withVersion(version))
		m.InstanceUid = uid
		if resp := links[i].message(context.Background(), nil, m); resp.GetErrorResponse() != nil {
			t.Errorf("agent %d: %v", i, resp.GetErrorResponse())
		}
	}
	for i := range links {
		links[i] = &link{g: g}
		send(i, "1.0") // idle: one agent per call
	}
	hold := make(chan struct{})
	store.mu.Lock()
	store.hold = hold
	store.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); send(0, "1.1") }() // its write holds the one call
	waitFor(t, func() bool { return len(g.slots) == 1 })
	for i := 1; i < len(links); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); send(i, "1.1") }()
	}
	waitFor(t, func() bool { return g.queuedSaves.Load() == int32(len(links)-1) })
	time.Sleep(10 * time.Millisecond) // from the count to the send
	close(hold)
	wg.Wait()
	store.mu.Lock()
	sizes := append([]int(nil), store.sizes...)
	store.mu.Unlock()
	want := []int{1, 1, 1, 1, 1, 1, 1, 5}
	if len(sizes) != len(want) {
		t.Fatalf("batches %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("batches %v, want %v", sizes, want)
		}
	}
	for i := range links {
		if a := store.get(links[i].s.id); a.ServiceVersion != "1.1" {
			t.Fatalf("agent %d stored %q, want 1.1", i, a.ServiceVersion)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
