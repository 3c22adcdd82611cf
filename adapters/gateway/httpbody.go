package gateway

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// opamp-go v0.23.0 reads a plain HTTP body whole, after gunzipping it whole
// when it says Content-Encoding: gzip (server/serverimpl.go, readReqBody):
// a gzip bomb of 512 KiB on the wire became 512 MiB in memory before the
// gateway saw the message. The gateway gives opamp-go a body that it
// gunzips itself, through a bound: at most MaxMessageBytes come out, at
// most compressedLimit go in, and a body that grows over smallMessageBytes
// waits for a decode slot first. The body is only read once opamp-go has
// accepted the request (its OnConnecting authenticates), so that a client
// without a token makes the gateway neither decompress nor wait for
// anything. opamp-go answers 400 to a body it cannot read; the response
// writer turns that into 413 for a body over the bound and 503 for one
// that found no slot.

// compressedLimit bounds the body on the wire: gzip adds a few bytes per
// 32 KiB block to data it cannot compress, so a message of the limit still
// fits.
func compressedLimit(limit int) int64 { return int64(limit) + int64(limit)/16 + 1024 }

var errBodyTooLarge = errors.New("request body too large")

type plainBody struct {
	wire    io.ReadCloser // bounded by http.MaxBytesReader
	gzipped bool
	src     io.Reader // the wire, or a gzip reader over it once the first Read came
	limit   int64
	n       int64
	slots   *decodeSlots
	done    <-chan struct{} // the request's context
	slotted bool
	status  int // what the response says instead of opamp-go's 400; 0: nothing
}

// boundPlainBody replaces r's body with a bounded one and w with a writer
// that reports its refusals; release returns the body's decode slot once
// the request was handled.
func (g *Gateway) boundPlainBody(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *plainBody) {
	b := &plainBody{
		wire:    http.MaxBytesReader(w, r.Body, compressedLimit(g.cfg.MaxMessageBytes)),
		gzipped: r.Header.Get("Content-Encoding") == "gzip", // as opamp-go tests it
		limit:   int64(g.cfg.MaxMessageBytes),
		slots:   g.decodeSlots,
		done:    r.Context().Done(),
	}
	if b.gzipped {
		r.Header.Del("Content-Encoding") // opamp-go reads what this body gives: plain bytes
	}
	r.Body = b
	return plainStatus{ResponseWriter: w, body: b}, b
}

func (b *plainBody) Read(p []byte) (int, error) {
	if b.status != 0 {
		return 0, errBodyTooLarge
	}
	if b.src == nil {
		if err := b.open(); err != nil {
			return 0, err
		}
	}
	if b.n >= smallMessageBytes && !b.slotted {
		if !b.slots.acquire(b.done) {
			b.status = http.StatusServiceUnavailable
			return 0, errors.New("no decode slot for a large message")
		}
		b.slotted = true
	}
	if room := b.limit + 1 - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.src.Read(p)
	b.n += int64(n)
	var tooLarge *http.MaxBytesError
	if b.n > b.limit || errors.As(err, &tooLarge) {
		b.status = http.StatusRequestEntityTooLarge
		return 0, fmt.Errorf("%w: over %d bytes", errBodyTooLarge, b.limit)
	}
	return n, err
}

func (b *plainBody) open() error {
	if !b.gzipped {
		b.src = b.wire
		return nil
	}
	zr, err := gzip.NewReader(b.wire)
	if err != nil {
		return fmt.Errorf("gzip body: %w", err)
	}
	b.src = zr
	return nil
}

func (b *plainBody) Close() error { return b.wire.Close() }

// release returns the decode slot once the request was handled.
func (b *plainBody) release() {
	if b.slotted {
		b.slotted = false
		b.slots.release()
	}
}

// plainStatus answers what the body refused instead of opamp-go's 400.
type plainStatus struct {
	http.ResponseWriter
	body *plainBody
}

func (w plainStatus) WriteHeader(code int) {
	if s := w.body.status; s != 0 && code == http.StatusBadRequest {
		if s == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		code = s
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w plainStatus) Unwrap() http.ResponseWriter { return w.ResponseWriter }
