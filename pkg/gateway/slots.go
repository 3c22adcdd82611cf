package gateway

import (
	"sync"
	"time"
)

// slots bound the agent store calls in flight (StoreConcurrency). When all
// are taken, calls wait in two queues, and a freed slot goes to the first
// queue first: the writes of reports that targets in progress wait for (an
// APPLIED or FAILED status, a new version or package status; awaited). In
// a wave of 1,000 each agent that applied its configuration also reports
// its collector's restart, so without this the APPLIED reports of the last
// agents queue behind the health reports of the first.
type slots struct {
	mu    sync.Mutex
	free  int
	queue [2][]chan struct{} // waiting calls: [0] awaited, [1] the rest
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire takes a slot, waiting in the first queue if first; it gives up
// when done fires first (nil: never) and then reports false.
func (s *slots) acquire(first bool, done <-chan time.Time) bool {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return true
	}
	q := 1
	if first {
		q = 0
	}
	ch := make(chan struct{}, 1) // release never blocks on it
	s.queue[q] = append(s.queue[q], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-done:
		s.mu.Lock()
		for i, c := range s.queue[q] {
			if c == ch {
				s.queue[q] = append(s.queue[q][:i], s.queue[q][i+1:]...)
				s.mu.Unlock()
				return false
			}
		}
		s.mu.Unlock()
		<-ch // handed a slot as the wait ended: pass it on
		s.release()
		return false
	}
}

// release frees a slot, handing it to the longest waiting call of the first
// non-empty queue.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for q := range s.queue {
		if len(s.queue[q]) > 0 {
			ch := s.queue[q][0]
			s.queue[q][0] = nil
			s.queue[q] = s.queue[q][1:]
			ch <- struct{}{}
			return
		}
	}
	s.free++
}
