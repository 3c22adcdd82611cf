package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/myriarch/myriarch/pkg/gate/gateserver"
)

// gateServers are the Prometheus and Alertmanager the local stack's gates
// read: Prometheus scrapes the simulated fleet's pipeline metrics at
// metricsTarget every second.
type gateServers struct {
	prometheus, alertmanager *gateserver.Process
	dir                      string
}

// startGateServers runs both in a temporary directory. A server that is not
// installed is an error for the demo (its gate needs Prometheus) and a
// warning for run: gates that read it are then red with an error.
func startGateServers(metricsTarget string, required bool, stderr io.Writer) (*gateServers, error) {
	dir, err := os.MkdirTemp("", "myriarch-gates-")
	if err != nil {
		return nil, err
	}
	g := &gateServers{dir: dir}
	for _, start := range []struct {
		sub string
		run func(dir string) (*gateserver.Process, error)
		set **gateserver.Process
	}{
		{"prometheus", func(d string) (*gateserver.Process, error) {
			return gateserver.StartPrometheus(d, []string{metricsTarget}, time.Second)
		}, &g.prometheus},
		{"alertmanager", gateserver.StartAlertmanager, &g.alertmanager},
	} {
		sub := dir + "/" + start.sub
		if err := os.MkdirAll(sub, 0o700); err != nil {
			g.stop()
			return nil, err
		}
		p, err := start.run(sub)
		var missing *gateserver.NotInstalledError
		switch {
		case errors.As(err, &missing) && !required:
			fmt.Fprintf(stderr, "myriarch-local: %v; gates that read it are red until it runs\n", err)
		case err != nil:
			g.stop()
			return nil, err
		default:
			*start.set = p
		}
	}
	return g, nil
}

func (g *gateServers) url(p *gateserver.Process) string {
	if p == nil {
		return ""
	}
	return p.URL
}

func (g *gateServers) stop() {
	for _, p := range []*gateserver.Process{g.prometheus, g.alertmanager} {
		if p != nil {
			_ = p.Stop()
		}
	}
	_ = os.RemoveAll(g.dir)
}
