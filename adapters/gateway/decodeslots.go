package gateway

import "time"

// decodeSlots bounds the large messages a task reads, decodes and handles
// at once (Config.DecodeSlots): each holds up to about three times
// MaxMessageBytes while it is read (io.ReadAll grows its buffer past the
// message), decoded (protobuf copies its bytes and strings) and handled.
// Worked example with the defaults: 4 slots × 3 × 8 MiB ≈ 96 MiB, whatever
// the agents send.
type decodeSlots struct {
	free  chan struct{}
	wait  time.Duration
	after func(time.Duration) <-chan time.Time
}

// DefaultDecodeSlots is Config.DecodeSlots unless set.
const DefaultDecodeSlots = 4

// DefaultSlotWait is Config.SlotWait unless set: a large message that waits
// longer is refused, and its agent sends it again.
const DefaultSlotWait = 10 * time.Second

func newDecodeSlots(n int, wait time.Duration, after func(time.Duration) <-chan time.Time) *decodeSlots {
	s := &decodeSlots{free: make(chan struct{}, n), wait: wait, after: after}
	for range n {
		s.free <- struct{}{}
	}
	return s
}

// acquire takes a slot; false when none came free within the wait or
// cancel was closed.
func (s *decodeSlots) acquire(cancel <-chan struct{}) bool {
	select {
	case <-s.free:
		return true
	default:
	}
	select {
	case <-s.free:
		return true
	case <-s.after(s.wait):
		return false
	case <-cancel:
		return false
	}
}

func (s *decodeSlots) release() { s.free <- struct{}{} }

// inUse is how many slots are taken.
func (s *decodeSlots) inUse() int { return cap(s.free) - len(s.free) }
