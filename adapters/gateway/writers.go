package gateway

import "sync"

// writers counts the sessions' writer goroutines so that a drain can wait
// until none runs. A sync.WaitGroup does not do: a writer starts whenever a
// report or a closing connection queues a change, also while a drain
// waits, and a WaitGroup's Add from zero must not race its Wait.
type writers struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n falls to zero; nil while n is zero
}

func (w *writers) add() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		w.none = make(chan struct{})
	}
	w.n++
}

func (w *writers) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 {
		close(w.none)
		w.none = nil
	}
}

// idle is closed once no writer runs (at once if none does now).
func (w *writers) idle() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	return w.none
}
