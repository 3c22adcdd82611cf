package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A server named by its variable is the one the gates read, and the stack
// starts none of that kind; only the demo's Prometheus, whose gate reads
// the demo's own fleet, is started all the same, and says so.
func TestChooseGateSources_VariablesWin(t *testing.T) {
	const prom, am = "http://prometheus.internal:9090", "http://alertmanager.internal:9093"
	for _, c := range []struct {
		name         string
		mode         string
		env          map[string]string
		prom, am     gateSource // name and env left out
		promOwn      bool       // the stack starts its own Prometheus
		alertOwn     bool       // the stack starts its own Alertmanager
		promSetAside string
	}{
		{name: "run, no variable", mode: "run", promOwn: true, alertOwn: true},
		{name: "run, both set", mode: "run", env: map[string]string{"MYRIARCH_PROMETHEUS_URL": prom, "MYRIARCH_ALERTMANAGER_URL": am},
			prom: gateSource{url: prom}, am: gateSource{url: am}},
		{name: "run, Prometheus only", mode: "run", env: map[string]string{"MYRIARCH_PROMETHEUS_URL": prom},
			prom: gateSource{url: prom}, alertOwn: true},
		{name: "run, Alertmanager only", mode: "run", env: map[string]string{"MYRIARCH_ALERTMANAGER_URL": am},
			promOwn: true, am: gateSource{url: am}},
		{name: "demo, no variable", mode: "demo", promOwn: true, alertOwn: true},
		{name: "demo, both set", mode: "demo", env: map[string]string{"MYRIARCH_PROMETHEUS_URL": prom, "MYRIARCH_ALERTMANAGER_URL": am},
			promOwn: true, promSetAside: prom, am: gateSource{url: am}}, // the demo's gate reads its own fleet
	} {
		t.Run(c.name, func(t *testing.T) {
			p, a := chooseGateSources(c.mode, func(k string) string { return c.env[k] })
			want := func(s gateSource, name, env string, own bool, setAside string) gateSource {
				s.name, s.env, s.own, s.setAside = name, env, own, setAside
				return s
			}
			if w := want(c.prom, "Prometheus", "MYRIARCH_PROMETHEUS_URL", c.promOwn, c.promSetAside); p != w {
				t.Errorf("Prometheus: got %+v, want %+v", p, w)
			}
			if w := want(c.am, "Alertmanager", "MYRIARCH_ALERTMANAGER_URL", c.alertOwn, ""); a != w {
				t.Errorf("Alertmanager: got %+v, want %+v", a, w)
			}
		})
	}
}

// The servers named by the variables are not started: nothing runs, and
// the gates get the variables' URLs.
func TestStartGateServers_VariablesStartNothing(t *testing.T) {
	p, a := chooseGateSources("run", func(k string) string {
		return map[string]string{"MYRIARCH_PROMETHEUS_URL": "http://127.0.0.1:1", "MYRIARCH_ALERTMANAGER_URL": "http://127.0.0.1:2"}[k]
	})
	var stderr bytes.Buffer
	g, err := startGateServers(p, a, "127.0.0.1:9464", true, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer g.stop(quietly)
	if len(g.processes) != 0 || g.prometheus.url != "http://127.0.0.1:1" || g.alertmanager.url != "http://127.0.0.1:2" || stderr.Len() != 0 {
		t.Errorf("started %d servers; gates read %q and %q; stderr %q", len(g.processes), g.prometheus.url, g.alertmanager.url, stderr.String())
	}
}

// The banner names the URL each gate reads and where it comes from.
func TestPrintGateSources(t *testing.T) {
	started := func(name, env, url string) gateSource { return gateSource{name: name, env: env, url: url, own: true} }
	for _, c := range []struct {
		name     string
		prom, am gateSource
		want     string
	}{
		{name: "started by the stack",
			prom: started("Prometheus", "MYRIARCH_PROMETHEUS_URL", "http://127.0.0.1:40001"),
			am:   started("Alertmanager", "MYRIARCH_ALERTMANAGER_URL", "http://127.0.0.1:40002"),
			want: "" +
				"  Prometheus        http://127.0.0.1:40001   (the gates read it; started by the stack, scrapes 127.0.0.1:9464)\n" +
				"  Alertmanager      http://127.0.0.1:40002   (the gates read it; started by the stack)\n"},
		{name: "the user's",
			prom: gateSource{name: "Prometheus", env: "MYRIARCH_PROMETHEUS_URL", url: "http://prometheus.internal:9090"},
			am:   gateSource{name: "Alertmanager", env: "MYRIARCH_ALERTMANAGER_URL", url: "http://alertmanager.internal:9093"},
			want: "" +
				"  Prometheus        http://prometheus.internal:9090   (the gates read yours, from MYRIARCH_PROMETHEUS_URL; the stack started none)\n" +
				"  Alertmanager      http://alertmanager.internal:9093   (the gates read yours, from MYRIARCH_ALERTMANAGER_URL; the stack started none)\n"},
		{name: "the demo sets Prometheus's variable aside; Alertmanager not installed",
			prom: gateSource{name: "Prometheus", env: "MYRIARCH_PROMETHEUS_URL", url: "http://127.0.0.1:40001", own: true, setAside: "http://prometheus.internal:9090"},
			am:   gateSource{name: "Alertmanager", env: "MYRIARCH_ALERTMANAGER_URL", own: true, missing: errors.New("prometheus-alertmanager is not installed")},
			want: "" +
				"  Prometheus        http://127.0.0.1:40001   (the gates read it; started by the stack, scrapes 127.0.0.1:9464, since the demo's gate reads its own fleet: MYRIARCH_PROMETHEUS_URL=http://prometheus.internal:9090 is not used)\n" +
				"  Alertmanager      not running   (not installed: gates that read it are red; install it, or point MYRIARCH_ALERTMANAGER_URL at your own)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			printGateSources(&b, c.prom, c.am, "127.0.0.1:9464")
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
		})
	}
}
