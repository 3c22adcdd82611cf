package gateway

import (
	"testing"
	"time"
)

// A drain waits for the writers that run, and for a writer that starts
// while it waits; with none running it does not wait at all.
func TestWriters_IdleWaitsForEveryWriter(t *testing.T) {
	var w writers
	select {
	case <-w.idle():
	default:
		t.Fatal("idle with no writer is not closed")
	}
	w.add()
	idle := w.idle()
	w.add() // starts while a drain waits on idle
	w.done()
	select {
	case <-idle:
		t.Fatal("idle closed while a writer still runs")
	case <-time.After(10 * time.Millisecond):
	}
	w.done()
	select {
	case <-idle:
	case <-time.After(time.Second):
		t.Fatal("idle not closed after the last writer")
	}
	w.add() // a new round: a new channel
	select {
	case <-w.idle():
		t.Fatal("idle closed with a writer running")
	default:
	}
	w.done()
}
