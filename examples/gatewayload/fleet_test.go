package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// A spread fleet starts agent i at i × spread / n: the last of 4 agents
// spread over 400 ms starts 300 ms after the first, so the fleet cannot be
// answered sooner; every agent is answered by the baseline server.
func TestStartFleet_SpreadPacesTheStarts(t *testing.T) {
	h, connContext, err := baseline()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = connContext
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "ws://" + srv.Listener.Addr().String() + "/v1/opamp"

	f, took, err := startFleet(ctx, url, 4, time.Hour, 400*time.Millisecond)
	defer f.stop()
	if err != nil {
		t.Fatal(err)
	}
	if took < 300*time.Millisecond {
		t.Errorf("a fleet of 4 spread over 400 ms was answered in %v, before its last agent was due to start (300 ms)", took)
	}
	if got := f.answered.Load(); got != 4 {
		t.Errorf("answered = %d, want 4", got)
	}

	storm, _, err := startFleet(ctx, url, 4, time.Hour, 0)
	defer storm.stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := storm.answered.Load(); got != 4 {
		t.Errorf("storm: answered = %d, want 4", got)
	}
}
