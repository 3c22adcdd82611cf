package cloud

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/myriarch/myriarch/adapters/api"
)

// Settings are what a local cloud's template is synthesized with and what
// its users need: the operators' tokens (the template holds only their
// hashes), and the loopback addresses of the servers the template names,
// chosen before the synthesis so that the template's URLs are theirs.
type Settings struct {
	Stage         string `json:"stage"`
	AdminToken    string `json:"adminToken"`
	OperatorToken string `json:"operatorToken"`
	ViewerToken   string `json:"viewerToken"`
	Prometheus    string `json:"prometheus"`   // host:port of the gates' Prometheus
	Alertmanager  string `json:"alertmanager"` // host:port of the gates' Alertmanager
	Metrics       string `json:"metrics"`      // host:port where the simulated fleet's metrics are scraped
	// PackageURL is the package download URL template of version rollouts
	// (the infra setting packageDownloadUrl): the gateway offers it.
	PackageURL string `json:"packageUrl"`
}

// Releases are the collector versions the cloud's API offers.
const Releases = "0.160.0,0.161.0,0.162.0,0.163.0,0.164.0"

// NewSettings mints tokens and picks free loopback ports.
func NewSettings() (Settings, error) {
	s := Settings{Stage: "cloud", PackageURL: "https://downloads.cloud.invalid/otelcol/{version}/otelcol.tar.gz"}
	for _, t := range []*string{&s.AdminToken, &s.OperatorToken, &s.ViewerToken} {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return s, err
		}
		*t = "myr_" + hex.EncodeToString(b[:])
	}
	for _, a := range []*string{&s.Prometheus, &s.Alertmanager, &s.Metrics} {
		p, err := freePort()
		if err != nil {
			return s, err
		}
		*a = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return s, nil
}

// Context are the synthesis's -c key=value settings.
func (s Settings) Context() []string {
	entries, _ := json.Marshal([]api.TokenEntry{
		{TokenSHA256: api.HashToken(s.AdminToken), Actor: "user:00000000-0000-4000-8000-000000000001", DisplayName: "cloud admin", Role: api.RoleAdmin},
		{TokenSHA256: api.HashToken(s.OperatorToken), Actor: "user:00000000-0000-4000-8000-000000000002", DisplayName: "cloud operator", Role: api.RoleOperator},
		{TokenSHA256: api.HashToken(s.ViewerToken), Actor: "user:00000000-0000-4000-8000-000000000003", DisplayName: "cloud viewer", Role: api.RoleViewer},
	})
	arch := "arm64"
	if runtime.GOARCH == "amd64" {
		arch = "x86_64"
	}
	return []string{
		"stage=" + s.Stage,
		"apiTokens=" + string(entries),
		"prometheusUrl=http://" + s.Prometheus,
		"alertmanagerUrl=http://" + s.Alertmanager,
		"packageDownloadUrl=" + s.PackageURL,
		"packageName=otelcol-contrib",
		"releases=" + Releases,
		"gatewayArch=" + arch,
		"deletionProtection=false",
	}
}
