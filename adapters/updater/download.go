package updater

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
)

// DefaultMaxArchiveBytes bounds a download when the configuration does not:
// an upstream otelcol-contrib archive is about a fifth of it.
const DefaultMaxArchiveBytes int64 = 512 << 20

var errTooLarge = errors.New("archive larger than the configured maximum")

// download fetches url into dst, at most max bytes, telling progress the
// percent done whenever it reaches a new tenth (0, 10, …, 100) when the
// server sends a Content-Length; without one the percent stays 0 until the
// end. A tenth, not every percent: each report is a message to the server,
// for every host of a fleet.
func download(ctx context.Context, client *http.Client, url, dst string, max int64, progress func(percent int)) (err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: HTTP %s", url, resp.Status)
	}
	if resp.ContentLength > max {
		return fmt.Errorf("download %s: %w (%d > %d bytes)", url, errTooLarge, resp.ContentLength, max)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("download: %w", cerr)
		}
	}()
	progress(0)
	w := &progressWriter{w: f, total: resp.ContentLength, report: progress}
	n, err := io.Copy(w, io.LimitReader(resp.Body, max+1))
	switch {
	case err != nil:
		return fmt.Errorf("download %s: %w", url, err)
	case n > max:
		return fmt.Errorf("download %s: %w (more than %d bytes)", url, errTooLarge, max)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return fmt.Errorf("download %s: %d of %d bytes", url, n, resp.ContentLength)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if w.tenth < 10 {
		progress(100)
	}
	return nil
}

// progressWriter counts what passes and reports each new tenth reached.
type progressWriter struct {
	w      io.Writer
	total  int64 // -1 when unknown
	n      int64
	tenth  int64
	report func(percent int)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.total > 0 {
		// Example: 73 of 100 bytes → tenth 7 → 70 %.
		if t := p.n * 10 / p.total; t > p.tenth {
			p.tenth = min(t, 10)
			p.report(int(p.tenth * 10))
		}
	}
	return n, err
}
