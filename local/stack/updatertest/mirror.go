// Package updatertest is a deployment's collector mirror for end-to-end
// tests of the myriarch-updater: per version a .tar.gz archive, the
// release's checksums file and a minisign signature of the archive, served
// over loopback HTTP, with the faults the tests need (a tampered archive,
// a download that stalls halfway).
package updatertest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"aead.dev/minisign"
)

// Mirror serves /otelcol/<version>/ like a mirror of the collector's
// releases signed with the operator's key.
type Mirror struct {
	URL       string // the server's base URL, no trailing slash
	PublicKey string // the minisign public key file's text (minisign.pub), for verify.minisignPublicKey

	priv   minisign.PrivateKey
	mu     sync.Mutex
	files  map[string][]byte // by path
	tamper map[string]bool   // archive paths served with one byte changed
	stall  map[string]chan struct{}
	hits   map[string]chan struct{} // closed when a stalled archive is half sent
}

// Templates are the gateway's package source for this mirror: archive,
// checksums file and signature, with {version}, {os} and {arch}.
func (m *Mirror) Templates() (archive, checksums, signature string) {
	archive = m.URL + "/otelcol/{version}/otelcol-contrib_{version}_{os}_{arch}.tar.gz"
	return archive, m.URL + "/otelcol/{version}/checksums.txt", archive + ".minisig"
}

// Prefix is the URL prefix the updater allows.
func (m *Mirror) Prefix() string { return m.URL + "/otelcol/" }

// New starts a mirror with a fresh key pair; it stops with the test.
func New(t *testing.T) *Mirror {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	text, err := pub.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	m := &Mirror{PublicKey: string(text), priv: priv, files: map[string][]byte{}, tamper: map[string]bool{},
		stall: map[string]chan struct{}{}, hits: map[string]chan struct{}{}}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// Add publishes version for this machine's platform: an archive holding
// binary under name (mode 0755), its line in the checksums file and its
// signature.
func (m *Mirror) Add(t *testing.T, version, name string, binary []byte) {
	t.Helper()
	archive, err := TarGz(name, binary)
	if err != nil {
		t.Fatal(err)
	}
	p := m.archivePath(version)
	sum := sha256.Sum256(archive)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[p] = archive
	m.files[p+".minisig"] = minisign.Sign(m.priv, archive)
	m.files["/otelcol/"+version+"/checksums.txt"] = []byte(hex.EncodeToString(sum[:]) + "  " + p[strings.LastIndex(p, "/")+1:] + "\n")
}

// Tamper serves version's archive with one byte changed (its checksums and
// signature stay those of the original), or the original again.
func (m *Mirror) Tamper(version string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tamper[m.archivePath(version)] = on
}

// Stall makes the next downloads of version's archive send half of it and
// wait. The channel it returns closes when a download is half sent;
// release lets every stalled download finish and ends the stall.
func (m *Mirror) Stall(version string) (halfSent <-chan struct{}, release func()) {
	p := m.archivePath(version)
	gate, hit := make(chan struct{}), make(chan struct{})
	m.mu.Lock()
	m.stall[p], m.hits[p] = gate, hit
	m.mu.Unlock()
	var once sync.Once
	return hit, func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.stall, p)
			m.mu.Unlock()
			close(gate)
		})
	}
}

func (m *Mirror) archivePath(version string) string {
	return fmt.Sprintf("/otelcol/%s/otelcol-contrib_%s_%s_%s.tar.gz", version, version, runtime.GOOS, runtime.GOARCH)
}

func (m *Mirror) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	body, ok := m.files[r.URL.Path]
	tampered, gate, hit := m.tamper[r.URL.Path], m.stall[r.URL.Path], m.hits[r.URL.Path]
	if gate != nil {
		delete(m.hits, r.URL.Path) // the first stalled download closes it
	}
	m.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if tampered {
		body = append([]byte(nil), body...)
		body[len(body)/2] ^= 0xff
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if gate == nil {
		_, _ = w.Write(body)
		return
	}
	half := len(body) / 2
	_, _ = w.Write(body[:half])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if hit != nil {
		close(hit)
	}
	select {
	case <-gate:
		_, _ = w.Write(body[half:])
	case <-r.Context().Done():
	}
}

// TarGz is a .tar.gz holding one executable, name, at its top level, as
// the collector's release archives hold otelcol-contrib.
func TarGz(name string, binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(binary))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
