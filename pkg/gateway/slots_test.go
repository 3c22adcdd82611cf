package gateway

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/agent"
)

// A freed slot goes to the awaited writes first, each queue in order.
func TestSlots_AwaitedFirst(t *testing.T) {
	s := newSlots(1)
	if !s.acquire(false, nil) {
		t.Fatal("a free slot was refused")
	}
	order := make(chan string, 4)
	wait := func(name string, first bool) {
		go func() {
			s.acquire(first, nil)
			order <- name
		}()
	}
	queued := func(n int) { // until n calls wait
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			s.mu.Lock()
			got := len(s.queue[0]) + len(s.queue[1])
			s.mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d calls queued, want %d", got, n)
			}
		}
	}
	wait("health-1", false)
	queued(1)
	wait("health-2", false)
	queued(2)
	wait("applied-1", true)
	queued(3)
	wait("applied-2", true)
	queued(4)
	var got []string
	for range 4 {
		s.release()
		got = append(got, <-order)
	}
	want := []string{"applied-1", "applied-2", "health-1", "health-2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("served %v, want %v", got, want)
		}
	}
	s.release()
	if s.free != 1 {
		t.Fatalf("%d free slots after every release, want 1", s.free)
	}
}

// A call that gives up leaves the queue and takes no slot with it.
func TestSlots_GiveUp(t *testing.T) {
	s := newSlots(1)
	s.acquire(false, nil)
	if s.acquire(false, time.After(10*time.Millisecond)) {
		t.Fatal("acquired a slot that was taken")
	}
	if n := len(s.queue[1]); n != 0 {
		t.Fatalf("%d calls still queued after giving up", n)
	}
	s.release()
	if !s.acquire(true, time.After(time.Second)) {
		t.Fatal("the released slot was lost")
	}
}

func TestAwaited(t *testing.T) {
	prev := agent.Agent{ID: id1, ServiceVersion: "1.0", RemoteConfig: agent.RemoteConfigStatus{Hash: "aa", Status: agent.ConfigApplied}}
	cases := []struct {
		name string
		mut  func(*agent.Agent)
		want bool
	}{
		{"APPLIED a new hash", func(a *agent.Agent) { a.RemoteConfig.Hash = "bb" }, true},
		{"FAILED", func(a *agent.Agent) { a.RemoteConfig.Status = agent.ConfigFailed }, true},
		{"APPLYING", func(a *agent.Agent) { a.RemoteConfig = agent.RemoteConfigStatus{Hash: "bb", Status: agent.ConfigApplying} }, false},
		{"a new version", func(a *agent.Agent) { a.ServiceVersion = "1.1" }, true},
		{"a package status", func(a *agent.Agent) { a.Package.Status = agent.PackageInstallFailed }, true},
		{"health", func(a *agent.Agent) { a.Health.Healthy = true }, false},
	}
	for _, c := range cases {
		next := prev
		c.mut(&next)
		if got := awaited(prev, next); got != c.want {
			t.Errorf("%s: awaited = %v, want %v", c.name, got, c.want)
		}
	}
}
