package updater

import (
	"context"
	"time"
)

// Clock is the updater's time: the times it reports come from Now, and the
// health check's pauses wait on After. The program passes the wall clock;
// tests pass one that moves only when waited on.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// sleep waits until clk has advanced by d or ctx is done.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	select {
	case <-clk.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
