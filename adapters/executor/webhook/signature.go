package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Headers of every request.
const (
	HeaderDelivery  = "X-Myriarch-Delivery"  // the delivery id
	HeaderEvent     = "X-Myriarch-Event"     // start, reset or cancel
	HeaderSignature = "X-Myriarch-Signature" // t=<unix seconds>,v1=<hex HMAC-SHA256>
)

// DefaultTolerance is how far a receiver should accept the signature's time
// from its own clock: it refuses a request recorded and replayed later.
const DefaultTolerance = 5 * time.Minute

// Sign is the X-Myriarch-Signature of a body sent at t: the hex HMAC-SHA256
// with the secret of "<t>.<body>", t in Unix seconds. The time is inside
// what is signed, so it cannot be changed without the secret.
// Example: t=1767261600,v1=5d4c…
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Errors of Verify.
var (
	ErrSignatureInvalid = errors.New("the signature does not match the body")
	ErrSignatureExpired = errors.New("the signature's time is too far from now")
)

// Verify checks a request as a receiver does: the header's v1 (any of
// them, should a sender sign with two secrets while one replaces the
// other) is the HMAC of "<t>.<body>", and t is within tolerance of now.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%s %q is not t=<unix seconds>,v1=<hex>", HeaderSignature, header)
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		ok = ok || hmac.Equal([]byte(s), []byte(want))
	}
	if !ok {
		return ErrSignatureInvalid
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now", ErrSignatureExpired, time.Unix(sec, 0).UTC().Format(time.RFC3339), d.Round(time.Second))
	}
	return nil
}
