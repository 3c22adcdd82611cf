// Package updater installs the collector versions that Myriarch offers on one
// Linux host: the myriarch-updater's steps (offered, downloading, verifying,
// installing, restarting, health_check and, when the new version is not
// healthy, rolling_back), the host rules that guard them, the journal that
// makes a crash at any point harmless, and the shapes in which the attempt
// is reported over OpAMP.
//
// The decisions are plain functions of plain values (after, resumeAt,
// checkVersion, AllowedURL, packageReport); Updater carries them out with the
// file system, HTTP and the commands of the host. An Updater works one
// attempt at a time: Resume and Handle are called from one goroutine, and
// Snapshot may be called from any.
//
// The collector's directory (Layout) holds every installed version under
// versions/<version>/ and a symlink current → versions/<version>, which the
// collector's service runs; the switch to a new version is one rename(2) of
// that symlink, so a crash leaves current on the old version or the new one,
// never between.
package updater
