package esm

import "sync"

// shard is one shard of the stream and its lanes.
type shard struct {
	id, parent string
	iter       *string
	lastSeq    string // the last record read: where to resume
	lanes      []*lane
	closed     bool
	drained    chan struct{} // closed when the shard ended and its lanes are done
}

// close ends the shard's lanes once they have delivered what they hold.
func (sh *shard) close() {
	if sh.closed {
		return
	}
	sh.closed = true
	var wg sync.WaitGroup
	for _, l := range sh.lanes {
		wg.Add(1)
		go func() { defer wg.Done(); l.wait() }()
		l.closeInput()
	}
	go func() { wg.Wait(); close(sh.drained) }()
}

// shards are the stream's shards known so far.
type shards struct {
	byID  map[string]*shard
	order []*shard
}

func (s *shards) add(sh *shard, lanes []*lane) {
	sh.lanes = lanes
	sh.drained = make(chan struct{})
	s.byID[sh.id] = sh
	s.order = append(s.order, sh)
}

// readable are the open shards whose parent, if known, has ended and been
// delivered: an item's records in a child shard follow those in its
// parent, so the child waits, as Lambda processes a parent shard first.
func (s *shards) readable() []*shard {
	var out []*shard
	for _, sh := range s.order {
		if sh.closed || sh.iter == nil {
			continue
		}
		if parent := s.byID[sh.parent]; parent != nil {
			select {
			case <-parent.drained:
			default:
				continue
			}
		}
		out = append(out, sh)
	}
	return out
}

// stop ends every lane (ctx has ended, so they stop at once) and waits.
func (s *shards) stop() {
	for _, sh := range s.order {
		sh.close()
	}
	for _, sh := range s.order {
		<-sh.drained
	}
}
