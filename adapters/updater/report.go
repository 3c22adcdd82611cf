package updater

import (
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// UpdateComponent is the health component in which the server reads the
// attempt (the gateway's updateComponent).
const UpdateComponent = "dev.myriarch.update"

// PackageStatus is the collector package's OpAMP status.
type PackageStatus int

const (
	PackageInstalled PackageStatus = iota
	PackageDownloading
	PackageInstalling
	PackageInstallFailed
)

// Report is what the updater tells the server, whole on every change: its
// last attempt and the collector package.
type Report struct {
	Attempt *Attempt // nil before the first attempt
	Package PackageReport
}

// PackageReport is the collector package as reported.
type PackageReport struct {
	Name            string // the offer's package name; "" (the top-level package) before any offer
	HasVersion      string // what current points to
	OfferedVersion  string
	OfferedHash     []byte
	Status          PackageStatus
	DownloadPercent int
	Error           string
	AllPackagesHash []byte // of the last offer handled
}

// packageReport derives the package status: installed unless the last
// offer's attempt is running (downloading with its percent, else
// installing) or ended without success (install failed, with why). An
// offer of the version that runs was acknowledged as installed.
func packageReport(j Journal, current string, percent int) PackageReport {
	p := PackageReport{HasVersion: current, Status: PackageInstalled}
	if j.Offer == nil {
		return p
	}
	p.Name, p.OfferedVersion, p.OfferedHash, p.AllPackagesHash = j.Offer.Package, j.Offer.Version, j.Offer.PackageHash, j.Offer.AllPackagesHash
	a := j.Attempt
	if a == nil || !a.Offer.Same(*j.Offer) {
		return p
	}
	switch a.Status {
	case Succeeded:
	case Failed, RolledBack:
		p.Status, p.Error = PackageInstallFailed, a.LastError
	case string(StepDownloading):
		p.Status, p.DownloadPercent = PackageDownloading, percent
	default:
		p.Status = PackageInstalling
	}
	return p
}

// Health is the updater's health: the process is healthy (StatusOK since
// start); the attempt is the child UpdateComponent, which the server finds
// at any depth.
func (r Report) Health(start time.Time) *protobufs.ComponentHealth {
	h := &protobufs.ComponentHealth{
		Healthy:            true,
		Status:             "StatusOK",
		StartTimeUnixNano:  unixNano(start),
		StatusTimeUnixNano: unixNano(start),
	}
	if r.Attempt != nil {
		h.ComponentHealthMap = map[string]*protobufs.ComponentHealth{UpdateComponent: Component(r.Attempt)}
	}
	return h
}

// Component carries the attempt (the simulated fleet's updater reports
// with it too): status is the running step or the end;
// children "version" and "from" carry "v" + a version in their status, and
// "step:<name>" children the steps begun. Only a failed attempt is
// unhealthy: a rollback restored a healthy host.
func Component(a *Attempt) *protobufs.ComponentHealth {
	start := unixNano(a.StartedAt)
	c := &protobufs.ComponentHealth{
		Healthy:            a.Status != Failed,
		Status:             a.Status,
		LastError:          a.LastError,
		StartTimeUnixNano:  start,
		StatusTimeUnixNano: unixNano(a.StatusTime),
		ComponentHealthMap: map[string]*protobufs.ComponentHealth{
			"version": {Healthy: true, Status: withV(a.Offer.Version), StartTimeUnixNano: start, StatusTimeUnixNano: start},
			"from":    {Healthy: true, Status: withV(a.From), StartTimeUnixNano: start, StatusTimeUnixNano: start},
		},
	}
	for name, s := range a.Steps {
		c.ComponentHealthMap["step:"+string(name)] = &protobufs.ComponentHealth{
			Healthy:            s.Status != StepFailed,
			Status:             s.Status,
			LastError:          s.LastError,
			StartTimeUnixNano:  unixNano(s.StartedAt),
			StatusTimeUnixNano: unixNano(s.StatusTime),
		}
	}
	return c
}

// withV is "v" + version; nothing before the first install stays "".
func withV(version string) string {
	if version == "" {
		return ""
	}
	return "v" + version
}

var packageStatuses = map[PackageStatus]protobufs.PackageStatusEnum{
	PackageInstalled:     protobufs.PackageStatusEnum_PackageStatusEnum_Installed,
	PackageDownloading:   protobufs.PackageStatusEnum_PackageStatusEnum_Downloading,
	PackageInstalling:    protobufs.PackageStatusEnum_PackageStatusEnum_Installing,
	PackageInstallFailed: protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed,
}

// PackageStatuses reports the collector package under the offer's name,
// with the download details only while downloading.
func (r Report) PackageStatuses() *protobufs.PackageStatuses {
	p := r.Package
	s := &protobufs.PackageStatus{
		Name:                 p.Name,
		AgentHasVersion:      p.HasVersion,
		ServerOfferedVersion: p.OfferedVersion,
		ServerOfferedHash:    p.OfferedHash,
		Status:               packageStatuses[p.Status],
		ErrorMessage:         p.Error,
	}
	if p.Status == PackageDownloading {
		s.DownloadDetails = &protobufs.PackageDownloadDetails{DownloadPercent: float64(p.DownloadPercent)}
	}
	all := p.AllPackagesHash
	if all == nil {
		all = []byte{} // the client refuses a nil hash
	}
	return &protobufs.PackageStatuses{
		Packages:                      map[string]*protobufs.PackageStatus{p.Name: s},
		ServerProvidedAllPackagesHash: all,
	}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}
