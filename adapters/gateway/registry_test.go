package gateway

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func silentIDs(r *registry, now time.Time, timeout time.Duration) []string {
	var ids []string
	for _, s := range r.silent(now, timeout) {
		ids = append(ids, s.id)
	}
	slices.Sort(ids)
	return ids
}

// TestRegistry_SilentAreThoseNotHeardForTheTimeout: over more sessions
// than one chunk of slots, the sweep finds exactly the registered sessions
// not heard from for longer than the timeout.
func TestRegistry_SilentAreThoseNotHeardForTheTimeout(t *testing.T) {
	r := newRegistry()
	var want []string
	for i := range beatChunk + 10 {
		s := &session{id: fmt.Sprintf("a-%05d", i)}
		s.heard(at(0))
		r.put(s)
		if i%7 == 0 {
			want = append(want, s.id)
		} else {
			s.heard(at(60))
		}
	}
	gone := r.get("a-00007")
	r.remove(gone)
	want = slices.DeleteFunc(want, func(id string) bool { return id == gone.id })

	if got := silentIDs(&r, at(91), 90*time.Second); !slices.Equal(got, want) {
		t.Errorf("%d silent, want %d: %v", len(got), len(want), got[:min(len(got), 5)])
	}
	if got := silentIDs(&r, at(90), 90*time.Second); len(got) != 0 {
		t.Errorf("silent at exactly the timeout: %v", got)
	}
	if r.len() != beatChunk+9 {
		t.Errorf("%d sessions held, want %d", r.len(), beatChunk+9)
	}
}

// TestRegistry_ALeftSessionDoesNotKeepItsSlotAlive: a session replaced by a
// newer one of the same agent (a reconnect whose old connection still
// sends), or removed, goes on being heard; that must neither hide the
// silence of the session that replaced it nor of a session that took its
// slot since.
func TestRegistry_ALeftSessionDoesNotKeepItsSlotAlive(t *testing.T) {
	r := newRegistry()
	old := &session{id: "a"}
	old.heard(at(0))
	r.put(old)
	newer := &session{id: "a"}
	newer.heard(at(0))
	r.put(newer)
	gone := &session{id: "b"}
	gone.heard(at(0))
	r.put(gone)
	r.remove(gone)
	other := &session{id: "c"} // takes the slot that old or gone left
	other.heard(at(0))
	r.put(other)

	for sec := range 200 {
		old.heard(at(sec))
		gone.heard(at(sec))
	}
	if got := silentIDs(&r, at(200), 90*time.Second); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("silent %v, want the newer session of a and c", got)
	}
	if got := r.silent(at(200), 90*time.Second); !slices.Contains(got, newer) || slices.Contains(got, old) {
		t.Error("the sweep found the replaced session instead of its successor")
	}
}

// BenchmarkRegistry_Sweep10000 is one sweep of 10,000 idle sessions,
// scattered over the heap as a task's are (each between the buffers of its
// connection).
func BenchmarkRegistry_Sweep10000(b *testing.B) {
	r := newRegistry()
	var buffers [][]byte
	for i := range 10000 {
		s := &session{id: fmt.Sprintf("a-%05d", i)}
		s.heard(at(0))
		r.put(s)
		buffers = append(buffers, make([]byte, 8<<10))
	}
	b.ResetTimer()
	for range b.N {
		if len(r.silent(at(60), 90*time.Second)) != 0 {
			b.Fatal("an idle session was found silent")
		}
	}
	b.StopTimer()
	_ = buffers
}
