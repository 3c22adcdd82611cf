package sfnlocal

import (
	"context"
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	clk := NewFakeClock(t0)
	var fired []time.Duration
	record := func() { fired = append(fired, clk.Now().Sub(t0)) }
	clk.AfterFunc(3*time.Second, record)
	stopped := clk.AfterFunc(2*time.Second, record)
	clk.AfterFunc(time.Second, record)
	clk.AfterFunc(time.Hour, record)
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop reports")
	}
	if next, ok := clk.Next(); !ok || next != t0.Add(time.Second) || clk.Pending() != 3 {
		t.Errorf("Next = %v %v, Pending = %d", next, ok, clk.Pending())
	}
	clk.Advance(5 * time.Second)
	if len(fired) != 2 || fired[0] != time.Second || fired[1] != 3*time.Second || clk.Now() != t0.Add(5*time.Second) {
		t.Errorf("fired %v, now %v", fired, clk.Now())
	}
	if !clk.AdvanceToNext() || clk.Now() != t0.Add(time.Hour) || len(fired) != 3 {
		t.Errorf("AdvanceToNext: now %v fired %v", clk.Now(), fired)
	}
	if clk.AdvanceToNext() {
		t.Error("AdvanceToNext with nothing pending")
	}
	clk.AfterFunc(0, record) // due now: runs at once
	if len(fired) != 4 {
		t.Errorf("fired %v", fired)
	}
	done := make(chan error)
	go func() { done <- Sleep(context.Background(), clk, time.Minute) }()
	for clk.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	clk.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestFunctionName(t *testing.T) {
	for in, want := range map[string][2]string{
		"engine":                    {"engine", ""},
		"engine:live":               {"engine", "live"},
		"123456789012:function:eng": {"eng", ""},
		"arn:aws:lambda:us-east-1:123456789012:function:engine":      {"engine", ""},
		"arn:aws:lambda:us-east-1:123456789012:function:engine:7":    {"engine", "7"},
		"arn:aws:lambda:eu-west-1:123456789012:function:engine:prod": {"engine", "prod"},
	} {
		name, q := functionName(in)
		if name != want[0] || q != want[1] {
			t.Errorf("functionName(%q) = %q %q", in, name, q)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{"rollout-42_a.b": true, "": false, "a b": false, "a/b": false, "a:b": false, "a{b": false, "ü": true} {
		if validName(name) != ok {
			t.Errorf("validName(%q) = %v", name, !ok)
		}
	}
}
