package cloud

import (
	"os"
	"path/filepath"
	"time"

	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// StartGates runs the Prometheus and Alertmanager that the template's
// gate settings name (Settings chose their ports before the synthesis),
// Prometheus scraping the simulated fleet's metrics every second. stop
// ends them.
func StartGates(s Settings, dir string) (stop func(), err error) {
	var procs []*gateserver.Process
	if dir, err = filepath.Abs(dir); err != nil {
		return func() {}, err
	}
	stop = func() {
		for _, p := range procs {
			_ = p.Stop()
		}
	}
	for _, sub := range []string{"prometheus", "alertmanager"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return stop, err
		}
	}
	p, err := gateserver.StartPrometheusOn(s.Prometheus, filepath.Join(dir, "prometheus"), []string{s.Metrics}, time.Second)
	if err != nil {
		return stop, err
	}
	procs = append(procs, p)
	a, err := gateserver.StartAlertmanagerOn(s.Alertmanager, filepath.Join(dir, "alertmanager"))
	if err != nil {
		stop()
		return func() {}, err
	}
	procs = append(procs, a)
	return stop, nil
}
