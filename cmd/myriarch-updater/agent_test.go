package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aead.dev/minisign"
	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"
	"google.golang.org/protobuf/proto"
)

// opampServer is an opamp-go server that offers one package on every new
// connection and keeps what the updater reports.
type opampServer struct {
	srv   server.OpAMPServer
	offer *protobufs.PackagesAvailable

	mu        sync.Mutex
	headers   []http.Header
	conns     []types.Connection
	desc      *protobufs.AgentDescription
	caps      uint64
	health    *protobufs.ComponentHealth
	pkgs      *protobufs.PackageStatuses
	updateLog []string // the update component's statuses as they arrived, repeats folded
	pkgLog    []string // "<status> has <version>", repeats folded
}

func startServer(t *testing.T, offer *protobufs.PackagesAvailable) *opampServer {
	t.Helper()
	s := &opampServer{srv: server.New(nil), offer: offer}
	err := s.srv.Start(server.StartSettings{
		ListenEndpoint: "127.0.0.1:0",
		Settings: server.Settings{Callbacks: types.Callbacks{OnConnecting: func(r *http.Request) types.ConnectionResponse {
			s.mu.Lock()
			s.headers = append(s.headers, r.Header.Clone())
			s.mu.Unlock()
			return types.ConnectionResponse{Accept: true, ConnectionCallbacks: types.ConnectionCallbacks{
				OnConnected: func(_ context.Context, c types.Connection) {
					s.mu.Lock()
					s.conns = append(s.conns, c)
					s.mu.Unlock()
				},
				OnMessage: s.onMessage,
			}}
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.srv.Stop(context.Background()) })
	return s
}

func (s *opampServer) endpoint() string { return "ws://" + s.srv.Addr().String() + "/v1/opamp" }

// onMessage keeps the reports; the first message of a connection (the one
// with the full state) is answered with the offer, as the gateway does.
func (s *opampServer) onMessage(_ context.Context, _ types.Connection, m *protobufs.AgentToServer) *protobufs.ServerToAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := m.GetAgentDescription(); d != nil {
		s.desc = proto.Clone(d).(*protobufs.AgentDescription)
	}
	if c := m.GetCapabilities(); c != 0 {
		s.caps = c
	}
	if h := m.GetHealth(); h != nil {
		s.health = proto.Clone(h).(*protobufs.ComponentHealth)
		if u := h.GetComponentHealthMap()["dev.myriarch.update"]; u != nil {
			s.updateLog = fold(s.updateLog, u.GetStatus())
		}
	}
	if p := m.GetPackageStatuses(); p != nil {
		s.pkgs = proto.Clone(p).(*protobufs.PackageStatuses)
		for _, st := range p.GetPackages() {
			s.pkgLog = fold(s.pkgLog, fmt.Sprintf("%s has %s", strings.TrimPrefix(st.GetStatus().String(), "PackageStatusEnum_"), st.GetAgentHasVersion()))
		}
	}
	reply := &protobufs.ServerToAgent{InstanceUid: m.GetInstanceUid()}
	if m.GetAgentDescription() != nil && s.offer != nil { // the first message of a connection carries the description
		reply.PackagesAvailable = s.offer
	}
	return reply
}

func fold(log []string, s string) []string {
	if len(log) > 0 && log[len(log)-1] == s {
		return log
	}
	return append(log, s)
}

// waitFor polls until cond holds on the server's view.
func (s *opampServer) waitFor(t *testing.T, what string, cond func(s *opampServer) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		ok := cond(s)
		s.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("timed out waiting for %s; update %v, packages %v", what, s.updateLog, s.pkgLog)
}

func (s *opampServer) update() *protobufs.ComponentHealth {
	return s.health.GetComponentHealthMap()["dev.myriarch.update"]
}

func attr(d *protobufs.AgentDescription, key string) string {
	for _, kv := range slices.Concat(d.GetIdentifyingAttributes(), d.GetNonIdentifyingAttributes()) {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// host is one host's files: the collector root with 0.149.0 running, the
// updater's configuration and secrets, a mirror and a collector health
// endpoint.
type host struct {
	dir, root, state, config, supervisorState, marker string
	pub                                               minisign.PublicKey
	priv                                              minisign.PrivateKey
	mirror                                            *httptest.Server
	archives                                          sync.Map // path → []byte
	unhealthyTries                                    atomic.Int32
}

const collectorUIDText = "0190A6E2-8D3C-7B1E-9F00-1234567890AB" // as a supervisor might write it

func newHost(t *testing.T) *host {
	t.Helper()
	dir := t.TempDir()
	h := &host{dir: dir, root: filepath.Join(dir, "otelcol"), state: filepath.Join(dir, "state"), marker: filepath.Join(dir, "restarted")}
	var err error
	if h.pub, h.priv, err = minisign.GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	h.mirror = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := h.archives.Load(r.URL.Path); ok {
			_, _ = w.Write(b.([]byte))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(h.mirror.Close)
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.unhealthyTries.Add(-1) >= 0 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(health.Close)

	versions := filepath.Join(h.root, "versions", "0.149.0")
	must(t, os.MkdirAll(versions, 0o755))
	must(t, os.WriteFile(filepath.Join(versions, "otelcol-contrib"), collectorScript("0.149.0"), 0o755))
	must(t, os.Symlink("versions/0.149.0", filepath.Join(h.root, "current")))
	h.supervisorState = writeFile(t, dir, "persistent_state.yaml", "instance_id: "+collectorUIDText+"\n")
	writeFile(t, dir, "token", "fleet-token\n")
	writeFile(t, dir, "key", strings.Repeat("ab", 32)+"\n")
	h.config = writeFile(t, dir, "updater.yaml", fmt.Sprintf(`
server:
  endpoint: %%s
  tokenFile: %[1]s/token
  keyFile: %[1]s/key
stateDir: %[2]s
collector:
  root: %[3]s
  binary: otelcol-contrib
  supervisorState: %[4]s
  restartCommand: [sh, -c, "sleep 0.2; touch %[5]s"]
  healthURL: %[6]s/
  healthTimeout: 20s
  versionCommand: [%[3]s/current/otelcol-contrib, --version]
verify:
  minisignPublicKey: %[7]s
allowedURLPrefixes: [%[8]s/otelcol/]
`, dir, h.state, h.root, h.supervisorState, h.marker, health.URL, h.pub.String(), h.mirror.URL))
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// collectorScript stands in for the collector's executable: it answers
// --version as otelcol-contrib does.
func collectorScript(version string) []byte {
	return []byte("#!/bin/sh\necho otelcol-contrib version " + version + "\n")
}

// publish serves an archive of the version and returns the offer with its
// hash and signature; served, when set, is what the mirror serves instead.
func (h *host) publish(t *testing.T, version string, served []byte) *protobufs.PackagesAvailable {
	t.Helper()
	archive := releaseArchive(t, version)
	path := "/otelcol/" + version + "/otelcol-contrib_" + version + "_linux_amd64.tar.gz"
	if served == nil {
		served = archive
	}
	h.archives.Store(path, served)
	sum := sha256.Sum256(archive)
	all := sha256.Sum256([]byte("offer " + version))
	return &protobufs.PackagesAvailable{
		Packages: map[string]*protobufs.PackageAvailable{"": {
			Type: protobufs.PackageType_PackageType_TopLevel, Version: version, Hash: all[:16],
			File: &protobufs.DownloadableFile{DownloadUrl: h.mirror.URL + path, ContentHash: sum[:], Signature: minisign.Sign(h.priv, archive)},
		}},
		AllPackagesHash: all[:],
	}
}

func releaseArchive(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
	}{{name: "LICENSE", body: []byte("license")}, {name: "otelcol-contrib", body: collectorScript(version)}} {
		must(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(f.body)
		must(t, err)
	}
	must(t, tw.Close())
	must(t, gz.Close())
	return buf.Bytes()
}

// runUpdater runs the program against the server until the test ends.
func runUpdater(t *testing.T, h *host, s *opampServer) {
	t.Helper()
	b, err := os.ReadFile(h.config)
	must(t, err)
	must(t, os.WriteFile(h.config, []byte(strings.Replace(string(b), "%s", s.endpoint(), 1)), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, h.config, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
}

func (h *host) current(t *testing.T) string {
	t.Helper()
	target, err := os.Readlink(filepath.Join(h.root, "current"))
	must(t, err)
	return target
}

// The updater takes an offer from an OpAMP server, installs it and reports
// every step through to succeeded: the health component with its steps and
// the package status, with the link to its collector in its description.
func TestUpdater_InstallsAnOffer(t *testing.T) {
	h := newHost(t)
	h.unhealthyTries.Store(2) // the restarted collector takes two tries to come up
	s := startServer(t, h.publish(t, "0.150.0", nil))
	runUpdater(t, h, s)

	s.waitFor(t, "the update to succeed", func(s *opampServer) bool { return s.update().GetStatus() == "succeeded" })
	s.waitFor(t, "the package installed", func(s *opampServer) bool {
		p := s.pkgs.GetPackages()[""]
		return p.GetStatus() == protobufs.PackageStatusEnum_PackageStatusEnum_Installed && p.GetAgentHasVersion() == "0.150.0"
	})

	s.mu.Lock()
	defer s.mu.Unlock()
	order := []string{"offered", "downloading", "verifying", "installing", "restarting", "health_check", "succeeded"}
	if !inOrder(s.updateLog, order) || !slices.Contains(s.updateLog, "restarting") || !slices.Contains(s.updateLog, "health_check") {
		t.Errorf("update statuses %v, want an ordered part of %v with restarting and health_check", s.updateLog, order)
	}
	u := s.update()
	children := map[string]string{}
	for name, c := range u.GetComponentHealthMap() {
		children[name] = c.GetStatus()
	}
	want := map[string]string{"version": "v0.150.0", "from": "v0.149.0", "step:offered": "done", "step:downloading": "done",
		"step:verifying": "done", "step:installing": "done", "step:restarting": "done", "step:health_check": "done"}
	if fmt.Sprint(children) != fmt.Sprint(want) || !u.GetHealthy() || u.GetStartTimeUnixNano() == 0 {
		t.Errorf("update component %v\nwant children %v", children, want)
	}
	if !inOrder(s.pkgLog, []string{"Installed has 0.149.0", "Installing has 0.149.0", "Downloading has 0.149.0", "Installing has 0.149.0", "Installing has 0.150.0", "Installed has 0.150.0"}) ||
		!slices.Contains(s.pkgLog, "Installing has 0.150.0") {
		t.Errorf("package statuses %v", s.pkgLog)
	}
	if got := string(s.pkgs.GetServerProvidedAllPackagesHash()); got != string(s.offer.GetAllPackagesHash()) {
		t.Error("server_provided_all_packages_hash is not the offer's")
	}
	if got := h.current(t); got != "versions/0.150.0" {
		t.Errorf("current → %s", got)
	}
	assertIdentity(t, h, s)
}

func assertIdentity(t *testing.T, h *host, s *opampServer) {
	t.Helper()
	uid, err := os.ReadFile(filepath.Join(h.state, "instance_uid"))
	must(t, err)
	for key, want := range map[string]string{
		"service.name": "myriarch-updater", "service.instance.id": strings.TrimSpace(string(uid)), "service.version": "dev",
		"os.type": "linux", "host.arch": runtime.GOARCH, "myriarch.updater.collector": strings.ToLower(collectorUIDText),
	} {
		if got := attr(s.desc, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	const want = protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_AcceptsPackages |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsPackageStatuses | protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat
	if s.caps != uint64(want) {
		t.Errorf("capabilities %b, want %b", s.caps, want)
	}
	hd := s.headers[0]
	if hd.Get("Authorization") != "Bearer fleet-token" || hd.Get("X-Myriarch-Agent-Key") != strings.Repeat("ab", 32) {
		t.Errorf("headers %v", hd)
	}
}

// inOrder reports whether got is a part of want in want's order (the
// client may fold reports that follow each other quickly into one message).
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		for i < len(want) && want[i] != g {
			i++
		}
		if i == len(want) {
			return false
		}
	}
	return len(got) > 0
}

// A tampered archive ends the attempt failed at verifying; current stays
// and the collector is not restarted.
func TestUpdater_TamperedArchive(t *testing.T) {
	h := newHost(t)
	s := startServer(t, h.publish(t, "0.150.0", releaseArchive(t, "0.150.0-evil")))
	runUpdater(t, h, s)

	s.waitFor(t, "the update to fail", func(s *opampServer) bool { return s.update().GetStatus() == "failed" })
	s.waitFor(t, "the package to fail", func(s *opampServer) bool {
		return s.pkgs.GetPackages()[""].GetStatus() == protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.update()
	v := u.GetComponentHealthMap()["step:verifying"]
	if u.GetHealthy() || v.GetStatus() != "failed" || !strings.Contains(v.GetLastError(), "SHA-256") || u.GetLastError() != v.GetLastError() {
		t.Errorf("update %v", u)
	}
	if _, ok := u.GetComponentHealthMap()["step:installing"]; ok {
		t.Error("installing began after a failed verification")
	}
	p := s.pkgs.GetPackages()[""]
	if p.GetAgentHasVersion() != "0.149.0" || p.GetServerOfferedVersion() != "0.150.0" || p.GetErrorMessage() != v.GetLastError() {
		t.Errorf("package %v", p)
	}
	if got := h.current(t); got != "versions/0.149.0" {
		t.Errorf("current → %s", got)
	}
	if _, err := os.Stat(h.marker); err == nil {
		t.Error("the collector was restarted")
	}
}

// At each connection the collector's UID is read again: a supervisor that
// changed it is followed.
func TestUpdater_FollowsTheSupervisorsUID(t *testing.T) {
	h := newHost(t)
	s := startServer(t, nil)
	runUpdater(t, h, s)
	s.waitFor(t, "the description", func(s *opampServer) bool { return s.desc != nil })

	next := uuid.New()
	must(t, os.WriteFile(h.supervisorState, []byte("instance_id: "+next.String()+"\n"), 0o600))
	s.mu.Lock()
	must(t, s.conns[0].Disconnect())
	s.mu.Unlock()
	s.waitFor(t, "the new link", func(s *opampServer) bool { return attr(s.desc, "myriarch.updater.collector") == next.String() })
	s.waitFor(t, "the package status", func(s *opampServer) bool {
		return s.pkgs.GetPackages()[""].GetAgentHasVersion() == "0.149.0" && len(s.headers) == 2
	})
}
