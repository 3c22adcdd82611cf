package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// PackageSource is where the collector archives of a deployment come from,
// and what proves them: a release's checksums file (the OpenTelemetry
// Collector releases publish one per release) and a minisign signature per
// archive, which the operator makes when mirroring a release into a bucket
// of theirs. A myriarch-updater refuses an offer without both (docs/updater.md).
//
// Each is a URL template: {version} (without a leading v), {os} and {arch}
// (the updater's os.type and host.arch, as Go names them: linux, amd64),
// e.g. https://mirror.example.com/otelcol/{version}/otelcol-contrib_{version}_{os}_{arch}.tar.gz.
// The checksums file lists "<sha256 hex>  <file name>" lines; the archive's
// line is found by the last path element of its URL.
type PackageSource struct {
	URL          string // the archive [Config.DownloadURL]
	ChecksumsURL string // "" offers no hash
	SignatureURL string // "" offers no signature
	HTTP         *http.Client

	mu    sync.Mutex
	cache map[string][]byte // fetched files by URL; only successes are kept
}

// sourceTimeout bounds one fetch of a checksums or signature file.
const sourceTimeout = 10 * time.Second

// maxSourceFileBytes bounds a checksums or signature file.
const maxSourceFileBytes = 1 << 20

// maxSourceCache bounds the files kept: a few releases' worth.
const maxSourceCache = 64

// File is the DownloadableFile of version for a host: its URL, and its
// SHA-256 and signature when the source has them.
func (p *PackageSource) File(ctx context.Context, version, goos, arch string) (*protobufs.DownloadableFile, error) {
	f := &protobufs.DownloadableFile{DownloadUrl: expand(p.URL, version, goos, arch)}
	if p.ChecksumsURL != "" {
		body, err := p.fetch(ctx, expand(p.ChecksumsURL, version, goos, arch))
		if err != nil {
			return nil, err
		}
		sum, err := checksumOf(body, path.Base(f.DownloadUrl))
		if err != nil {
			return nil, err
		}
		f.ContentHash = sum
	}
	if p.SignatureURL != "" {
		sig, err := p.fetch(ctx, expand(p.SignatureURL, version, goos, arch))
		if err != nil {
			return nil, err
		}
		f.Signature = sig
	}
	return f, nil
}

// expand fills a URL template.
func expand(t, version, goos, arch string) string {
	return strings.NewReplacer("{version}", version, "{os}", goos, "{arch}", arch).Replace(t)
}

// checksumOf finds the SHA-256 of name in a checksums file (sha256sum's
// format: the digest, one or two spaces or " *", the file name).
func checksumOf(body []byte, name string) ([]byte, error) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 || strings.TrimPrefix(fields[1], "*") != name {
			continue
		}
		sum, err := hex.DecodeString(fields[0])
		if err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("checksums file: the line of %s has no SHA-256", name)
		}
		return sum, nil
	}
	return nil, fmt.Errorf("checksums file lists no %s", name)
}

func (p *PackageSource) fetch(ctx context.Context, url string) ([]byte, error) {
	p.mu.Lock()
	body, ok := p.cache[url]
	p.mu.Unlock()
	if ok {
		return body, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("package source %s: %w", url, err)
	}
	client := p.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("package source: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("package source %s: %s", url, resp.Status)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxSourceFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("package source %s: %w", url, err)
	}
	if len(body) > maxSourceFileBytes {
		return nil, fmt.Errorf("package source %s: larger than %d bytes", url, maxSourceFileBytes)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache == nil || len(p.cache) >= maxSourceCache {
		p.cache = map[string][]byte{} // releases are few: start over rather than track ages
	}
	p.cache[url] = body
	return body, nil
}
