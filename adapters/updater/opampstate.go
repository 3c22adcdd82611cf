package updater

import (
	"context"
	"errors"
	"io"

	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
)

// OwnDownloads satisfies opamp-go's PackagesStateProvider, without which the
// client refuses the AcceptsPackages capability, for an agent that takes
// offers itself: the myriarch-updater downloads, verifies and keeps its state
// (its journal), and the simulated fleet's updater downloads nothing. Neither
// calls the client's PackageSyncer, so only the statuses to report at start
// are read: Statuses' answer at that moment.
type OwnDownloads struct {
	Statuses func() *protobufs.PackageStatuses
}

var _ types.PackagesStateProvider = OwnDownloads{}

var errOwnDownloads = errors.New("packages are installed by the updater itself, not by the OpAMP client")

func (p OwnDownloads) LastReportedStatuses() (*protobufs.PackageStatuses, error) {
	return p.Statuses(), nil
}

func (OwnDownloads) SetLastReportedStatuses(*protobufs.PackageStatuses) error { return nil }
func (OwnDownloads) AllPackagesHash() ([]byte, error)                         { return nil, nil }
func (OwnDownloads) SetAllPackagesHash([]byte) error                          { return nil }
func (OwnDownloads) Packages() ([]string, error)                              { return nil, nil }
func (OwnDownloads) PackageState(string) (types.PackageState, error) {
	return types.PackageState{}, nil
}
func (OwnDownloads) SetPackageState(string, types.PackageState) error  { return errOwnDownloads }
func (OwnDownloads) CreatePackage(string, protobufs.PackageType) error { return errOwnDownloads }
func (OwnDownloads) FileContentHash(string) ([]byte, error)            { return nil, nil }
func (OwnDownloads) DeletePackage(string) error                        { return errOwnDownloads }

func (OwnDownloads) UpdateContent(context.Context, string, io.Reader, []byte, []byte) error {
	return errOwnDownloads
}
