package simfleet

import (
	"context"
	"errors"
	"io"

	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
)

// noPackages satisfies opamp-go's PackagesStateProvider, without which the
// client refuses the AcceptsPackages capability. The simulated updater never
// calls the client's PackageSyncer (there is nothing to download), so only
// the statuses to report at start are ever read.
type noPackages struct{ initial *protobufs.PackageStatuses }

var _ types.PackagesStateProvider = noPackages{}

var errNoDownloads = errors.New("simfleet: packages are simulated, not downloaded")

func (p noPackages) LastReportedStatuses() (*protobufs.PackageStatuses, error) { return p.initial, nil }

func (noPackages) SetLastReportedStatuses(*protobufs.PackageStatuses) error { return nil }
func (noPackages) AllPackagesHash() ([]byte, error)                         { return nil, nil }
func (noPackages) SetAllPackagesHash([]byte) error                          { return nil }
func (noPackages) Packages() ([]string, error)                              { return nil, nil }
func (noPackages) PackageState(string) (types.PackageState, error)          { return types.PackageState{}, nil }
func (noPackages) SetPackageState(string, types.PackageState) error         { return errNoDownloads }
func (noPackages) CreatePackage(string, protobufs.PackageType) error        { return errNoDownloads }
func (noPackages) FileContentHash(string) ([]byte, error)                   { return nil, nil }
func (noPackages) DeletePackage(string) error                               { return errNoDownloads }

func (noPackages) UpdateContent(context.Context, string, io.Reader, []byte, []byte) error {
	return errNoDownloads
}
