package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

// DefaultDownloadURL is the package URL template when none is configured;
// {version} is replaced by the offered version. example.invalid never
// resolves: a real deployment sets its own.
const DefaultDownloadURL = "https://example.invalid/otelcol/{version}"

// serverCapabilities is what the gateway declares in every response.
const serverCapabilities = uint64(protobufs.ServerCapabilities_ServerCapabilities_AcceptsStatus |
	protobufs.ServerCapabilities_ServerCapabilities_OffersRemoteConfig |
	protobufs.ServerCapabilities_ServerCapabilities_AcceptsEffectiveConfig |
	protobufs.ServerCapabilities_ServerCapabilities_OffersPackages |
	protobufs.ServerCapabilities_ServerCapabilities_AcceptsPackagesStatus |
	protobufs.ServerCapabilities_ServerCapabilities_OffersConnectionSettings)

// wantsConfig reports whether the desired configuration must be sent: one is
// desired, the agent has not reported any status for it (APPLIED, APPLYING
// and FAILED all mean it has it), and it was not sent on this connection yet.
func wantsConfig(a agent.Agent, sent string) bool {
	return a.DesiredHash != "" && a.DesiredHash != a.RemoteConfig.Hash && a.DesiredHash != sent
}

// wantsOffer reports whether the package offer must be sent: one is pending,
// the agent neither runs that version nor reports a package status about it
// (downloading, installing, installed or failed), and it was not sent on this
// connection yet. A failed install is not offered again on the same terms;
// the engine decides what follows.
//
// PackageOffer is an offer key (agent.OfferKey): a retry of a failed target
// carries its attempt, and is offered again although the agent reports
// INSTALL_FAILED for that version.
func wantsOffer(a agent.Agent, sent string) bool {
	return a.InstallsOwnPackages() && offerPending(a, sent)
}

// offerPending is wantsOffer's rule without asking who installs: for an
// agent that takes no packages itself, a is the collector with its
// updater's reports (agent.WithUpdater), and the offer goes to the updater
// (delegate.go).
func offerPending(a agent.Agent, sent string) bool {
	v := NormalizeVersion(agent.OfferVersion(a.PackageOffer))
	retry := a.PackageOffer != agent.OfferVersion(a.PackageOffer) && a.Package.Status == agent.PackageInstallFailed
	return v != "" && a.PackageOffer != sent && v != a.ServiceVersion && (v != a.Package.Version || retry)
}

// remoteConfigFor is the AgentRemoteConfig of a rendered configuration. The
// hex hash travels as raw bytes, so the agent's report of it, hex-encoded by
// Translate, reads back as the same (lower-case) string.
func remoteConfigFor(hash string, body []byte, contentType string) (*protobufs.AgentRemoteConfig, error) {
	raw, err := hex.DecodeString(hash)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("configuration hash %q is not hex", hash)
	}
	return &protobufs.AgentRemoteConfig{
		ConfigHash: raw,
		Config: &protobufs.AgentConfigMap{ConfigMap: map[string]*protobufs.AgentConfigFile{
			"": {Body: body, ContentType: contentType}, // one file: the OpAMP spec allows the empty name
		}},
	}, nil
}

// packagesFor is the PackagesAvailable offer of an offer key (a collector
// version, and the attempt of a retry). Its hashes depend only on the
// package name, the key and the URL, so every gateway task offers the same
// bytes and an agent that already has the offer recognizes it, while a
// retry is a new offer.
func packagesFor(packageName, offerKey, urlTemplate string) *protobufs.PackagesAvailable {
	url := strings.ReplaceAll(urlTemplate, "{version}", agent.OfferVersion(offerKey))
	return packagesOf(packageName, offerKey, &protobufs.DownloadableFile{DownloadUrl: url})
}

// packagesOf is the offer of file; its hashes cover the file's content hash
// and signature too, so that a mirror's new signature is a new offer.
func packagesOf(packageName, offerKey string, file *protobufs.DownloadableFile) *protobufs.PackagesAvailable {
	h := sha256.New()
	for _, part := range [][]byte{[]byte("myriarch/package"), []byte(packageName), []byte(offerKey), []byte(file.GetDownloadUrl()),
		file.GetContentHash(), file.GetSignature()} {
		h.Write(part)
		h.Write([]byte{0})
	}
	pkgHash := h.Sum(nil)
	if len(file.GetContentHash()) == 0 && len(file.GetSignature()) == 0 { // as before: the same bytes from every task and release
		sum := sha256.Sum256([]byte("myriarch/package\x00" + packageName + "\x00" + offerKey + "\x00" + file.GetDownloadUrl()))
		pkgHash = sum[:]
	}
	allHash := sha256.Sum256(append([]byte("myriarch/packages\x00"), pkgHash...))
	return &protobufs.PackagesAvailable{
		Packages: map[string]*protobufs.PackageAvailable{
			packageName: {
				Type:    protobufs.PackageType_PackageType_TopLevel,
				Version: agent.OfferVersion(offerKey),
				File:    file,
				Hash:    pkgHash,
			},
		},
		AllPackagesHash: allHash[:],
	}
}

// heartbeatFor asks the agent to send a heartbeat every interval, when it
// reports heartbeats and does not accept OpAMP connection settings: an agent
// that accepts them (the collector's supervisor) takes any such offer as a
// new server to connect to and would reconnect to an empty endpoint; it
// keeps its configured heartbeat, which must match the gateway's.
func heartbeatFor(capabilities uint64, interval time.Duration) *protobufs.ConnectionSettingsOffers {
	const reports = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat)
	const accepts = uint64(protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings)
	seconds := uint64(interval / time.Second)
	if capabilities&reports == 0 || capabilities&accepts != 0 || seconds == 0 {
		return nil
	}
	hash := sha256.Sum256([]byte("myriarch/heartbeat\x00" + strconv.FormatUint(seconds, 10)))
	return &protobufs.ConnectionSettingsOffers{
		Hash:  hash[:],
		Opamp: &protobufs.OpAMPConnectionSettings{HeartbeatIntervalSeconds: seconds},
	}
}
