// Package gatetest runs the real Prometheus and Alertmanager
// (local/gate/gateserver) for integration tests: each server on a free
// loopback port, with its configuration and data under the test's temporary
// directory, stopped when the test ends.
package gatetest

import (
	"errors"
	"os"
	"testing"

	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// started registers the stop of a process with the test, or fails it. A
// missing binary fails the test too: the integration tests are part of the
// suite, in CI above all. Only an explicit unit-only run outside CI
// (MYRIARCH_UNIT_ONLY, `make unit`) skips them, as local/storetest does for
// DynamoDB Local.
func started(t testing.TB, p *gateserver.Process, err error) string {
	t.Helper()
	var missing *gateserver.NotInstalledError
	switch {
	case errors.As(err, &missing) && os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "":
		t.Skipf("MYRIARCH_UNIT_ONLY: %s is not installed; the gate's integration tests run with make test", missing.Binary)
	case err != nil:
		t.Fatalf("the gate's integration tests run the real server: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Logf("stop %s: %v", p.Name, err)
		}
	})
	return p.URL
}
