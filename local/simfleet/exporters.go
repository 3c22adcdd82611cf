package simfleet

import (
	"errors"
	"fmt"
	"slices"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// ExportFailure makes the agents of a zone fail a share of their exports
// while they run a configuration that carries Marker: "the new configuration
// breaks exports in one zone". The zero value fails nothing.
type ExportFailure struct {
	Marker   string  // a configuration containing it fails exports; "" = off
	Where    string  // which agents: a selector as for FailExporters ("" = every agent)
	Fraction float64 // share of the spans that fail, 0..1; 0 means 1
}

// check finds what makes the failure impossible or a likely typo: a share
// outside 0..1, a selector without a marker, or one that no zone matches.
func (ef ExportFailure) check(zones []string) []error {
	var errs []error
	if ef.Fraction < 0 || ef.Fraction > 1 {
		errs = append(errs, fmt.Errorf("export failure fraction %v is outside 0..1", ef.Fraction))
	}
	if ef.Marker == "" && (ef.Where != "" || ef.Fraction != 0) {
		errs = append(errs, errors.New("export failure without a marker fails nothing"))
	}
	if ef.Marker != "" && ef.Where != "" && !slices.ContainsFunc(zones, func(z string) bool {
		region, zone := splitZone(z)
		return inZone(ef.Where, region, zone)
	}) {
		errs = append(errs, fmt.Errorf("export failure where %q matches none of the zones %q", ef.Where, zones))
	}
	return errs
}

// FailExporters makes the agents in where fail fraction (0 < fraction <= 1)
// of their exports from now on, as when the backend they export to degrades:
// their otlp exporter counts those spans as send_failed instead of sent and
// their health check answers 503. Their OpAMP health does not change, as a
// collector's exporter that retries does not report one. where is
// "<region>/<zone>" (one zone), "<region>" (all of its zones) or "" (every
// agent), matched against the agents' cloud.region and
// cloud.availability_zone now. It fails if no agent is in where.
func (f *Fleet) FailExporters(where string, fraction float64) error {
	if fraction <= 0 || fraction > 1 {
		return fmt.Errorf("fail exporters in %q: fraction %v is outside (0, 1]", where, fraction)
	}
	return f.setScenario(where, fraction)
}

// HealExporters ends what FailExporters began for the agents in where (same
// selector). A failure that a marked configuration causes (Config.ExportFailure)
// stays until a configuration without the marker runs.
func (f *Fleet) HealExporters(where string) error { return f.setScenario(where, 0) }

func (f *Fleet) setScenario(where string, fraction float64) error {
	var matched []*agent
	for _, a := range f.agents {
		a.mu.Lock()
		if a.inLocked(where) {
			matched = append(matched, a)
			a.traffic.advance(a.cfg.Clock.Now())
			a.traffic.failScenario = fraction
		}
		a.mu.Unlock()
	}
	if len(matched) == 0 {
		return fmt.Errorf("no agent is in %q", where)
	}
	for _, a := range matched {
		f.changes.tell(a)
	}
	f.changes.notify()
	return nil
}

// setConfigExportFailureLocked makes the configuration rc the one that
// decides Config.ExportFailure's share for the agent (mu held): it fails
// exports if it carries the marker and the agent is where the failure is.
func (a *agent) setConfigExportFailureLocked(rc *protobufs.AgentRemoteConfig) {
	ef := a.cfg.ExportFailure
	fraction := 0.0
	if ef.Marker != "" && carries(rc, ef.Marker) && a.inLocked(ef.Where) {
		fraction = ef.Fraction
	}
	a.traffic.advance(a.cfg.Clock.Now())
	a.traffic.failConfig = fraction
}

// inLocked reports whether the agent's reported region and zone are in where
// (mu held).
func (a *agent) inLocked(where string) bool {
	d := a.descriptionLocked()
	return inZone(where, attribute(d, "cloud.region"), attribute(d, "cloud.availability_zone"))
}
