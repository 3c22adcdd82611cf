package updater

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aead.dev/minisign"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// fakeClock moves only when waited on: After advances it by d at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// entry is one file of a test archive.
type entry struct {
	name, body string
	typ        byte // tar.TypeReg when 0
	link       string
}

// tarGz builds a .tar.gz of the entries.
func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Linkname: e.link, Mode: 0o755, Size: int64(len(e.body))}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const binaryName = "otelcol-contrib"

// release is an upstream-shaped archive of a version: the binary at the
// top, beside a README and a LICENSE that are not installed.
func release(t *testing.T, version string) []byte {
	return tarGz(t,
		entry{name: "LICENSE", body: "license"},
		entry{name: "README.md", body: "readme"},
		entry{name: binaryName, body: "#!/bin/sh\necho otelcol-contrib version " + version + "\n"},
	)
}

// env is one host: a collector root, a state directory, a mirror that serves
// archives, a key that signs them and a collector that restarts and answers
// health checks as told.
type env struct {
	t        *testing.T
	layout   Layout
	state    string
	clock    *fakeClock
	pub      minisign.PublicKey
	priv     minisign.PrivateKey
	mirror   *httptest.Server
	files    sync.Map // path → []byte
	requests atomic.Int32

	mu        sync.Mutex
	restarts  int
	restartFn func() error               // nil: the restart succeeds
	unhealthy map[string]error           // version → its health check's error
	reports   []Report                   // every report, in order
	running   func(version string) error // nil: current must point to the version
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := &env{t: t, layout: Layout{Root: filepath.Join(dir, "otelcol"), Binary: binaryName},
		state: filepath.Join(dir, "state"), clock: newClock(), pub: pub, priv: priv, unhealthy: map[string]error{}}
	e.mirror = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.requests.Add(1)
		b, ok := e.files.Load(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b.([]byte))
	}))
	t.Cleanup(e.mirror.Close)
	return e
}

func (e *env) config() Config {
	return Config{
		StateDir:           e.state,
		Layout:             e.layout,
		AllowedURLPrefixes: []string{e.mirror.URL + "/otelcol/"},
		PublicKey:          e.pub,
		HTTPClient:         e.mirror.Client(),
		Restarter:          restarterFunc(e.restart),
		Health:             healthFunc(e.check),
		Clock:              e.clock,
		Report: func(r Report) {
			e.mu.Lock()
			e.reports = append(e.reports, r)
			e.mu.Unlock()
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (e *env) updater() *Updater {
	e.t.Helper()
	u, err := New(e.config())
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

type restarterFunc func(context.Context) error

func (f restarterFunc) Restart(ctx context.Context) error { return f(ctx) }

type healthFunc func(context.Context, string) error

func (f healthFunc) Check(ctx context.Context, v string) error { return f(ctx, v) }

func (e *env) restart(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.restarts++
	if e.restartFn != nil {
		return e.restartFn()
	}
	return nil
}

// check is the collector's health: a version told to be unhealthy fails;
// otherwise current must point to the version, as a collector restarted
// from current would run it.
func (e *env) check(_ context.Context, version string) error {
	e.mu.Lock()
	err := e.unhealthy[version]
	e.mu.Unlock()
	if err != nil {
		return err
	}
	if current, _ := e.layout.Current(); current != version {
		return errors.New("the collector runs " + current + ", not " + version)
	}
	return nil
}

// seed installs versions as an earlier updater would have: directories
// with the binary and current on the last one.
func (e *env) seed(versions ...string) {
	e.t.Helper()
	for _, v := range versions {
		if err := os.MkdirAll(e.layout.dir(v), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(e.layout.binary(v), []byte("old "+v), 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.layout.switchTo(versions[len(versions)-1]); err != nil {
		e.t.Fatal(err)
	}
}

// publish puts an archive on the mirror and returns its offer: the URL,
// the archive's SHA-256 and its minisign signature.
func (e *env) publish(version string, archive []byte) Offer {
	path := "/otelcol/" + version + "/otelcol-contrib_" + version + "_linux_amd64.tar.gz"
	e.files.Store(path, archive)
	sum := sha256.Sum256(archive)
	all := sha256.Sum256([]byte("offer " + version))
	return Offer{Package: "collector", Version: version, URL: e.mirror.URL + path,
		ContentHash: sum[:], Signature: minisign.Sign(e.priv, archive), AllPackagesHash: all[:], PackageHash: all[:8]}
}

func (e *env) current() string {
	e.t.Helper()
	v, err := e.layout.Current()
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// versions lists the directories under versions/.
func (e *env) versions() []string {
	e.t.Helper()
	entries, err := os.ReadDir(e.layout.versionsDir())
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, d := range entries {
		names = append(names, d.Name())
	}
	return names
}

// statuses are the attempt statuses reported, consecutive repeats folded.
func (e *env) statuses() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.reports {
		if r.Attempt == nil {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != r.Attempt.Status {
			out = append(out, r.Attempt.Status)
		}
	}
	return out
}

// packages are the package statuses reported ("Downloading 30", ...),
// consecutive repeats folded.
func (e *env) packages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := map[PackageStatus]string{PackageInstalled: "Installed", PackageDownloading: "Downloading",
		PackageInstalling: "Installing", PackageInstallFailed: "InstallFailed"}
	var out []string
	for _, r := range e.reports {
		s := names[r.Package.Status] + " has " + r.Package.HasVersion
		if r.Package.Status == PackageDownloading {
			s += " " + strconv.Itoa(r.Package.DownloadPercent) + "%"
		}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func (e *env) last() Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.reports) == 0 {
		e.t.Fatal("nothing reported")
	}
	return e.reports[len(e.reports)-1]
}

// stepStatuses maps each step begun to its status.
func stepStatuses(a *Attempt) map[Step]string {
	out := map[Step]string{}
	for s, st := range a.Steps {
		out[s] = st.Status
	}
	return out
}

func equal(a, b []string) bool { return slices.Equal(a, b) }

func sha256Of(b []byte) []byte {
	sum := sha256.Sum256(b)
	return sum[:]
}
