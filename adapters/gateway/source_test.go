package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// mirror serves a release as an operator's mirror would: an archive per
// platform, the release's checksums file, and a minisign signature per
// archive. It counts the requests.
func mirror(t *testing.T) (*httptest.Server, map[string][]byte, *atomic.Int32) {
	t.Helper()
	files := map[string][]byte{
		"/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz":         []byte("amd64 archive"),
		"/0.150.0/otelcol-contrib_0.150.0_linux_arm64.tar.gz":         []byte("arm64 archive"),
		"/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz.minisig": []byte("untrusted comment: sig\nRWQ...\n"),
	}
	var sums strings.Builder
	for name, body := range files {
		if strings.HasSuffix(name, ".tar.gz") {
			fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(body), name[strings.LastIndex(name, "/")+1:])
		}
	}
	files["/0.150.0/checksums.txt"] = []byte(sums.String())
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, files, &requests
}

func TestPackageSource_FileWithItsHashAndSignature(t *testing.T) {
	srv, files, requests := mirror(t)
	p := &PackageSource{URL: srv.URL + "/{version}/otelcol-contrib_{version}_{os}_{arch}.tar.gz",
		ChecksumsURL: srv.URL + "/{version}/checksums.txt", SignatureURL: srv.URL + "/{version}/otelcol-contrib_{version}_{os}_{arch}.tar.gz.minisig"}
	f, err := p.File(context.Background(), "0.150.0", "linux", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(files["/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz"])
	if f.GetDownloadUrl() != srv.URL+"/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz" || !bytes.Equal(f.GetContentHash(), want[:]) ||
		!bytes.Equal(f.GetSignature(), files["/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz.minisig"]) {
		t.Fatalf("file %v", f)
	}
	before := requests.Load()
	if _, err := p.File(context.Background(), "0.150.0", "linux", "amd64"); err != nil || requests.Load() != before {
		t.Fatalf("a second offer of the release read the mirror again (%d requests), %v", requests.Load()-before, err)
	}
	if _, err := p.File(context.Background(), "0.150.0", "linux", "arm64"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a missing signature: %v, want the mirror's 404", err)
	}
	if _, err := p.File(context.Background(), "0.151.0", "linux", "amd64"); err == nil {
		t.Fatal("a release without a checksums file was offered")
	}
}

func TestChecksumOf(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	body := []byte("# comment\n" + strings.Repeat("cd", 32) + "  other.tar.gz\n" + sum + " *wanted.tar.gz\nnot-hex  bad.tar.gz\n")
	if got, err := checksumOf(body, "wanted.tar.gz"); err != nil || fmt.Sprintf("%x", got) != sum {
		t.Fatalf("checksumOf = %x, %v", got, err)
	}
	if _, err := checksumOf(body, "bad.tar.gz"); err == nil {
		t.Error("a line without a SHA-256 was taken")
	}
	if _, err := checksumOf(body, "missing.tar.gz"); err == nil || !strings.Contains(err.Error(), "lists no missing.tar.gz") {
		t.Errorf("a file the checksums do not list: %v", err)
	}
}
