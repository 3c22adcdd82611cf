package gatetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPrometheusScrapes(t *testing.T) {
	target := ServeMetrics(t, "gatetest_up 1\n")
	prom := StartPrometheus(t, []string{target}, 200*time.Millisecond)
	WaitForData(t, prom, "gatetest_up == 1")
}

func TestAlertmanagerKeepsPostedAlerts(t *testing.T) {
	am := StartAlertmanager(t)
	PostAlert(t, am, map[string]string{"alertname": "GatetestFiring", "region": "eu-west-1"})
	resp, err := http.Get(am + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var alerts []struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || alerts[0].Labels["alertname"] != "GatetestFiring" {
		t.Fatalf("alerts %+v, want the one posted", alerts)
	}
}

// recorder is a testing.TB that records how a helper ended it.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	skipped bool
	failed  string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	panic(errEnded)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	panic(errEnded)
}

// errEnded stands for the runtime.Goexit of a real Fatalf or Skipf.
var errEnded = errors.New("the helper ended the test")

func (r *recorder) run(f func(testing.TB)) {
	defer func() {
		if p := recover(); p != nil && p != errEnded {
			panic(p)
		}
	}()
	f(r)
}

// A missing server fails the test, in CI even when unit-only is asked; it
// skips only for an explicit unit-only run outside CI.
func TestMissingBinary(t *testing.T) {
	for _, c := range []struct {
		name, ci, unitOnly string
		skip               bool
	}{
		{name: "default", ci: "", unitOnly: "", skip: false},
		{name: "CI", ci: "true", unitOnly: "", skip: false},
		{name: "CI, unit only", ci: "true", unitOnly: "1", skip: false},
		{name: "unit only", ci: "", unitOnly: "1", skip: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", c.ci)
			t.Setenv("MYRIARCH_UNIT_ONLY", c.unitOnly)
			r := &recorder{TB: t}
			r.run(func(tb testing.TB) { StartAlertmanager(tb) })
			if r.skipped != c.skip || (!c.skip && !strings.Contains(r.failed, "apt-get install")) {
				t.Errorf("skipped %v, failed %q; want skip %v or a failure naming the package", r.skipped, r.failed, c.skip)
			}
		})
	}
}
