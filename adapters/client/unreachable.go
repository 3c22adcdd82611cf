package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
)

// UnreachableError is a request that got no answer from the API: nothing
// listens at the URL, its host name does not resolve, the connection or the
// answer timed out, or TLS failed. BaseURL is the URL tried (without
// credentials), Reason says why in a few words.
type UnreachableError struct {
	BaseURL string
	Method  string
	Path    string
	Reason  string // "connection refused", "no such host api.example", "timed out", ...
	Err     error
}

// Error is "cannot reach the API at <url> (<reason>)".
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the API at %s (%s)", e.BaseURL, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachableReason names what went wrong in a transport error, in words
// and without Go's chain of operations ("dial tcp 127.0.0.1:8080: connect:
// connection refused" is "connection refused").
func unreachableReason(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such host " + dns.Name
	case errors.As(err, &dns):
		return "DNS lookup of " + dns.Name + " failed: " + dns.Err
	case errors.As(err, &timeout) && timeout.Timeout():
		return "timed out"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host"
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return "TLS certificate not accepted: " + innermost(err).Error()
	case errors.As(err, &record):
		return "TLS handshake failed: the server does not speak TLS (http:// instead of https://?)"
	}
	return innermost(err).Error()
}

// innermost is the error beneath the url.Error and the net.OpError, which
// repeat the method and the address.
func innermost(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return err
}

// redacted is a URL without the password of its user information, for
// messages.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Redacted()
}
