package simfleet

import (
	"context"
	"fmt"
	"slices"

	"github.com/open-telemetry/opamp-go/protobufs"
)

const (
	pkgInstallPending = protobufs.PackageStatusEnum_PackageStatusEnum_InstallPending
	pkgDownloading    = protobufs.PackageStatusEnum_PackageStatusEnum_Downloading
	pkgInstalling     = protobufs.PackageStatusEnum_PackageStatusEnum_Installing
	pkgInstalled      = protobufs.PackageStatusEnum_PackageStatusEnum_Installed
	pkgInstallFailed  = protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed
)

// install is the myriarch-updater taking a collector package offer: the steps
// offered, downloading (0, 50, 100 %), verifying, installing, restarting (the
// supervisor's restart into the new version) and health_check, each reported
// in the update component and, where OpAMP has a status for it, in the
// package status. A failing agent offered one of FailVersions fails the
// verifying step and keeps its version.
func (a *agent) install(ctx context.Context, of *offer) error {
	version := bare(of.pkg.GetVersion())
	a.report(func() {
		now := a.cfg.Clock.Now()
		a.update = &attempt{version: version, from: a.version, startedAt: now, steps: map[string]step{}}
		a.update.begin(StepOffered, now)
		a.pkg = pkgState{name: of.name, hasVersion: a.version, offeredVersion: of.pkg.GetVersion(),
			offeredHash: of.pkg.GetHash(), allPackagesHash: of.allHash, status: pkgInstallPending}
	}, withHealth|withPackages)

	stepTime := a.jit.around(a.cfg.Delays.UpdateStep)
	if err := a.sleep(ctx, stepTime); err != nil {
		return err
	}
	a.report(func() {
		a.next(StepOffered, StepDownloading)
		a.pkg.status, a.pkg.downloadPercent = pkgDownloading, 0
	}, withHealth|withPackages)
	if err := a.sleep(ctx, stepTime/2); err != nil {
		return err
	}
	a.report(func() { a.pkg.downloadPercent = 50 }, withPackages)
	if err := a.sleep(ctx, stepTime/2); err != nil {
		return err
	}
	a.report(func() {
		a.next(StepDownloading, StepVerifying)
		a.pkg.downloadPercent = 100
	}, withHealth|withPackages)
	if err := a.sleep(ctx, stepTime); err != nil {
		return err
	}
	if a.failing && slices.ContainsFunc(a.cfg.FailVersions, func(v string) bool { return bare(v) == version }) {
		a.report(func() {
			msg := fmt.Sprintf("simfleet: signature of %s v%s does not verify on %s", a.cfg.ServiceName, version, HostName(a.n))
			a.update.finish(StepVerifying, a.cfg.Clock.Now(), msg)
			a.pkg.status, a.pkg.errorMessage = pkgInstallFailed, msg
		}, withHealth|withPackages)
		return nil
	}
	a.report(func() {
		a.next(StepVerifying, StepInstalling)
		a.pkg.status = pkgInstalling
	}, withHealth|withPackages)
	if err := a.sleep(ctx, stepTime); err != nil {
		return err
	}
	err := a.restart(ctx, func() {
		a.next(StepInstalling, StepRestarting)
		a.pkg.status, a.pkg.hasVersion = pkgInstalled, version
		a.version = version
	}, func() { a.next(StepRestarting, StepHealthCheck) })
	if err != nil {
		return err
	}
	if err := a.sleep(ctx, stepTime); err != nil {
		return err
	}
	a.report(func() {
		a.update.finish(StepHealthCheck, a.cfg.Clock.Now(), "")
		a.update.status = AttemptSucceeded
	}, withHealth)
	return nil
}

// replace is an update from outside OpAMP (a webhook's receiver, an
// Ansible job): the collector restarts into the version and the package
// status reports it installed; there is no update component, since no
// updater ran.
func (a *agent) replace(ctx context.Context, version string) error {
	return a.restart(ctx, func() {
		a.version = version
		a.pkg.status, a.pkg.hasVersion, a.pkg.errorMessage = pkgInstalled, version, ""
	}, nil)
}

// next finishes one step and begins the following one at the same time
// (mu held).
func (a *agent) next(done, begin string) {
	now := a.cfg.Clock.Now()
	a.update.finish(done, now, "")
	a.update.begin(begin, now)
}
