package simfleet

import (
	"bytes"
	"context"
	"fmt"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"
)

const (
	applying = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING
	applied  = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED
	failed   = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED
)

// applyConfig does what the supervisor does with a remote configuration:
// APPLYING, then after the apply delay APPLIED with the new effective
// configuration and a restart of the collector. A failing agent fails a
// configuration that carries the marker, in its FailMode.
func (a *agent) applyConfig(ctx context.Context, rc *protobufs.AgentRemoteConfig) error {
	hash := rc.GetConfigHash()
	if hash == nil {
		hash = []byte{} // the client refuses a nil hash in the status
	}
	a.reportConfig(applying, hash, "")
	if err := a.sleep(ctx, a.jit.between(a.cfg.Delays.ApplyMin, a.cfg.Delays.ApplyMax)); err != nil {
		return err
	}
	fails := a.failing && carries(rc, a.cfg.FailMarker)
	if fails && a.cfg.FailMode == FailReject {
		a.reportConfig(failed, hash, fmt.Sprintf("simfleet: %s rejects the configuration (it contains %q)", HostName(a.n), a.cfg.FailMarker))
		return nil
	}
	a.mu.Lock()
	a.effective = proto.Clone(rc.GetConfig()).(*protobufs.AgentConfigMap)
	a.setConfigExportFailureLocked(rc)
	a.mu.Unlock()
	a.reportConfig(applied, hash, "")
	a.cmu.RLock()
	a.warn("effective config", a.client.UpdateEffectiveConfig(ctx))
	a.cmu.RUnlock()
	if err := a.restart(ctx, nil, nil); err != nil {
		return err
	}
	if !fails {
		return nil
	}
	if err := a.sleep(ctx, a.jit.around(a.cfg.Delays.Started)); err != nil {
		return err
	}
	a.report(func() {
		a.setHealth(false, StatusRecoverableError, fmt.Sprintf("simfleet: %s exporter failing after the configuration change", HostName(a.n)))
	}, withHealth)
	return nil
}

// carries reports whether a file of the configuration contains the marker.
func carries(rc *protobufs.AgentRemoteConfig, marker string) bool {
	for _, f := range rc.GetConfig().GetConfigMap() {
		if bytes.Contains(f.GetBody(), []byte(marker)) {
			return true
		}
	}
	return false
}

// restart is the supervisor's restart of the collector: the new process
// reports healthy=false with no status, then StatusStarting, then StatusOK.
// It ends with the collector healthy. An update passes begin, which goes with
// the first report (together with the description and the package status),
// and healthy, which goes with StatusOK; both run with mu held.
func (a *agent) restart(ctx context.Context, begin, healthy func()) error {
	parts := withHealth
	if begin != nil {
		parts |= withDescription | withPackages
	}
	a.report(func() {
		if begin != nil {
			begin()
		}
		a.health.startTime = a.cfg.Clock.Now()
		a.setHealth(false, "", "")
	}, parts)
	if err := a.sleep(ctx, a.jit.around(a.cfg.Delays.Starting)); err != nil {
		return err
	}
	a.report(func() { a.setHealth(false, StatusStarting, "") }, withHealth)
	if err := a.sleep(ctx, a.jit.around(a.cfg.Delays.Started)); err != nil {
		return err
	}
	a.report(func() {
		if healthy != nil {
			healthy()
		}
		a.setHealth(true, StatusOK, "")
	}, withHealth)
	return nil
}

// setHealth changes the collector's health at the clock's now (mu held); the
// span counters follow the process and whether its pipeline runs.
func (a *agent) setHealth(healthy bool, status, lastError string) {
	now := a.cfg.Clock.Now()
	a.health.healthy, a.health.status, a.health.lastError = healthy, status, lastError
	a.health.statusTime = now
	a.traffic.follow(a.health, now)
}
