package main

import (
	"context"
	"errors"
	"io"

	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/pkg/updater"
)

// packagesState satisfies opamp-go's PackagesStateProvider, without which
// the client refuses the AcceptsPackages capability. The updater downloads,
// verifies and keeps its state itself (its journal) and never calls the
// client's PackageSyncer, so only the statuses to report at start are read:
// the updater's own.
type packagesState struct{ upd *updater.Updater }

var _ types.PackagesStateProvider = packagesState{}

var errOwnDownloads = errors.New("myriarch-updater: packages are installed by the updater, not by the OpAMP client")

func (p packagesState) LastReportedStatuses() (*protobufs.PackageStatuses, error) {
	return p.upd.Snapshot().PackageStatuses(), nil
}

func (packagesState) SetLastReportedStatuses(*protobufs.PackageStatuses) error { return nil }
func (packagesState) AllPackagesHash() ([]byte, error)                         { return nil, nil }
func (packagesState) SetAllPackagesHash([]byte) error                          { return nil }
func (packagesState) Packages() ([]string, error)                              { return nil, nil }
func (packagesState) PackageState(string) (types.PackageState, error) {
	return types.PackageState{}, nil
}
func (packagesState) SetPackageState(string, types.PackageState) error  { return errOwnDownloads }
func (packagesState) CreatePackage(string, protobufs.PackageType) error { return errOwnDownloads }
func (packagesState) FileContentHash(string) ([]byte, error)            { return nil, nil }
func (packagesState) DeletePackage(string) error                        { return errOwnDownloads }

func (packagesState) UpdateContent(context.Context, string, io.Reader, []byte, []byte) error {
	return errOwnDownloads
}
