package gateway

import (
	"net"
	"sync"
	"time"
)

// sourceLimit counts the open WebSocket connections of each source address
// and refuses one over Config.MaxConnsPerSource, so that one host cannot
// take a task's file descriptors and memory. A refusal is logged once per
// source per refusalLogEvery, with the refusals since the last line, so
// that a client retrying in a loop does not flood the log.
type sourceLimit struct {
	max int // 0: no limit
	now func() time.Time

	mu      sync.Mutex
	sources map[string]*source
}

type source struct {
	open      int
	refused   int       // since the last line
	lastShown time.Time // of the last line; zero: none
}

// refusalLogEvery is how often a source's refusals are logged at most.
const refusalLogEvery = time.Minute

// sourceOf is the host of a request's remote address.
func sourceOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

// acquire counts a connection of src; ok is false when src has max open
// already. show is the number of refusals to log now (0: none, this one is
// counted for a later line).
func (s *sourceLimit) acquire(src string) (ok bool, show int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.sources[src]
	if e == nil {
		e = &source{}
		s.sources[src] = e
	}
	if s.max > 0 && e.open >= s.max {
		e.refused++
		if now := s.now(); e.lastShown.IsZero() || now.Sub(e.lastShown) >= refusalLogEvery {
			show, e.refused, e.lastShown = e.refused, 0, now
		}
		return false, show
	}
	e.open++
	return true, 0
}

// release uncounts a connection of src. An entry without connections goes,
// and with it the refusals not yet logged (they were counted in Stats).
func (s *sourceLimit) release(src string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.sources[src]; e != nil {
		if e.open--; e.open <= 0 {
			delete(s.sources, src)
		}
	}
}
