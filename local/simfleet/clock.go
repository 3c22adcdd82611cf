package simfleet

import (
	"context"
	"time"
)

// Clock is the simulation's time source: report times come from Now, delays
// wait on After. Tests pass a clock that moves only when told to.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock returns the wall clock.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// sleep waits until clk has advanced by d or ctx is done.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	select {
	case <-clk.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scale divides a simulated duration by the speed factor.
// Example: 3 s at speed 100 → 30 ms.
func scale(d time.Duration, speed float64) time.Duration {
	return time.Duration(float64(d) / speed)
}
