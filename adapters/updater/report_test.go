package updater

import "testing"

// The package status follows the last offer's attempt.
func TestPackageReport(t *testing.T) {
	o := Offer{Package: "collector", Version: "0.150.0", AllPackagesHash: []byte{1}}
	older := Offer{Package: "collector", Version: "0.150.0", AllPackagesHash: []byte{0}}
	attempt := func(of Offer, status, lastError string) *Attempt {
		a := newAttempt(of, "0.149.0", t0)
		a.Status, a.LastError = status, lastError
		return a
	}
	tests := []struct {
		name    string
		j       Journal
		want    PackageStatus
		percent int
		err     string
	}{
		{name: "no offer yet", j: Journal{}, want: PackageInstalled},
		{name: "downloading", j: Journal{Offer: &o, Attempt: attempt(o, "downloading", "")}, want: PackageDownloading, percent: 40},
		{name: "verifying", j: Journal{Offer: &o, Attempt: attempt(o, "verifying", "")}, want: PackageInstalling},
		{name: "rolling back", j: Journal{Offer: &o, Attempt: attempt(o, "rolling_back", "")}, want: PackageInstalling},
		{name: "succeeded", j: Journal{Offer: &o, Attempt: attempt(o, Succeeded, "")}, want: PackageInstalled},
		{name: "failed", j: Journal{Offer: &o, Attempt: attempt(o, Failed, "boom")}, want: PackageInstallFailed, err: "boom"},
		{name: "rolled back", j: Journal{Offer: &o, Attempt: attempt(o, RolledBack, "rolled back")}, want: PackageInstallFailed, err: "rolled back"},
		{name: "acknowledged after an older failure", j: Journal{Offer: &o, Attempt: attempt(older, Failed, "boom")}, want: PackageInstalled},
	}
	for _, tt := range tests {
		p := packageReport(tt.j, "0.149.0", 40)
		if p.Status != tt.want || p.DownloadPercent != tt.percent || p.Error != tt.err || p.HasVersion != "0.149.0" {
			t.Errorf("%s: %+v", tt.name, p)
		}
	}
	if s := (Report{Package: packageReport(Journal{}, "0.149.0", 0)}).PackageStatuses(); s.ServerProvidedAllPackagesHash == nil || s.Packages[""] == nil {
		t.Errorf("before any offer: %v, want the top-level package and a non-nil hash", s)
	}
}
