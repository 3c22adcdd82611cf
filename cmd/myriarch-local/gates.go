package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/myriarch/myriarch/adapters/gate/gateread"
	"github.com/myriarch/myriarch/local/gate/gateserver"
)

// gateSource is where the local stack's gates read one kind of server: a
// server of the user's, named by its variable, or one the stack starts.
type gateSource struct {
	name string // "Prometheus" or "Alertmanager"
	env  string // the variable that names a server of the user's
	// url is what the gates read: the variable's value, the started
	// server's URL, or "" when none runs.
	url string
	own bool // the stack starts it (or tried to)
	// setAside is the variable's value when the stack starts its own all
	// the same (the demo's Prometheus).
	setAside string
	// missing says why an own server does not run: its package is not
	// installed (run only; the demo refuses to start without it).
	missing error
}

// chooseGateSources decides, for each kind, whether the stack starts a
// server of its own: not when the user's variable names one, since the
// gates must read the server the user pointed them at. The demo's
// Prometheus is the exception: the demo's gate reads the metrics of its own
// simulated fleet, on a port only the stack knows, which only a Prometheus
// the stack starts scrapes; a Prometheus of the user's would have no data,
// and a gate with no data is red.
func chooseGateSources(mode string, getenv func(string) string) (prometheus, alertmanager gateSource) {
	choose := func(name, env string, ownAlways bool) gateSource {
		s := gateSource{name: name, env: env}
		switch v := getenv(env); {
		case v == "":
			s.own = true
		case ownAlways:
			s.own, s.setAside = true, v
		default:
			s.url = v
		}
		return s
	}
	return choose("Prometheus", gateread.EnvPrometheusURL, mode == "demo"),
		choose("Alertmanager", gateread.EnvAlertmanagerURL, false)
}

// gatesDirPrefix starts the name of the folder of the servers the stack
// starts, in the temporary directory.
const gatesDirPrefix = "myriarch-gates-"

// gateServers are the Prometheus and Alertmanager the local stack's gates
// read; those the stack starts run in a temporary directory (one a killed
// run left is removed by the next: removeStaleRunDirs), Prometheus
// scraping the simulated fleet's pipeline metrics at metricsTarget every
// second.
type gateServers struct {
	prometheus, alertmanager gateSource
	processes                []gateProcess
	dir                      string
}

// gateProcess is a server the stack started, with the name the banner gives it.
type gateProcess struct {
	name string
	*gateserver.Process
}

// startGateServers starts the servers chooseGateSources gave to the
// stack. A server that is not installed is an error for the demo (its gate
// needs Prometheus) and a warning for run: gates that read it are then red
// with an error.
func startGateServers(prometheus, alertmanager gateSource, metricsTarget string, required bool, stderr io.Writer) (*gateServers, error) {
	removeStaleRunDirs(gatesDirPrefix, stderr)
	dir, err := makeRunDir(gatesDirPrefix)
	if err != nil {
		return nil, err
	}
	g := &gateServers{prometheus: prometheus, alertmanager: alertmanager, dir: dir}
	for _, start := range []struct {
		sub string
		run func(dir string) (*gateserver.Process, error)
		src *gateSource
	}{
		{"prometheus", func(d string) (*gateserver.Process, error) {
			return gateserver.StartPrometheus(d, []string{metricsTarget}, time.Second)
		}, &g.prometheus},
		{"alertmanager", gateserver.StartAlertmanager, &g.alertmanager},
	} {
		if !start.src.own {
			continue
		}
		sub := dir + "/" + start.sub
		if err := os.MkdirAll(sub, 0o700); err != nil {
			g.stop(quietly)
			return nil, err
		}
		p, err := start.run(sub)
		var missing *gateserver.NotInstalledError
		switch {
		case errors.As(err, &missing) && !required:
			fmt.Fprintf(stderr, "myriarch-local: %v; gates that read it are red until it runs (or point %s at your own)\n", err, start.src.env)
			start.src.missing = err
		case err != nil:
			g.stop(quietly)
			return nil, err
		default:
			start.src.url = p.URL
			g.processes = append(g.processes, gateProcess{start.src.name, p})
		}
	}
	return g, nil
}

// stop stops the servers the stack started, Prometheus first, and removes
// their folder.
func (g *gateServers) stop(say reporter) {
	for _, p := range g.processes {
		say(p.name, p.Stop())
	}
	_ = os.RemoveAll(g.dir)
}

// printGateSources is the banner's account of what the gates read: each
// server's URL, and whether the stack started it or the user's variable
// named it.
func printGateSources(w io.Writer, prometheus, alertmanager gateSource, metricsTarget string) {
	for _, s := range []gateSource{prometheus, alertmanager} {
		fmt.Fprintf(w, "  %-18s%s   (%s)\n", s.name, or(s.url, "not running"), s.origin(metricsTarget))
	}
}

// origin says where the gates' server comes from, for the banner.
func (s gateSource) origin(metricsTarget string) string {
	scrapes := ""
	if s.name == "Prometheus" {
		scrapes = ", scrapes " + metricsTarget
	}
	switch {
	case !s.own:
		return "the gates read yours, from " + s.env + "; the stack started none"
	case s.missing != nil:
		return fmt.Sprintf("not installed: gates that read it are red; install it, or point %s at your own", s.env)
	case s.setAside != "":
		return "the gates read it; started by the stack" + scrapes + ", since the demo's gate reads its own fleet: " + s.env + "=" + s.setAside + " is not used"
	}
	return "the gates read it; started by the stack" + scrapes
}
