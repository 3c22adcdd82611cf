package gateread

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sigV4Service is the signing name of Amazon Managed Service for Prometheus.
const sigV4Service = "aps"

// SigV4RoundTripper signs each request with AWS Signature Version 4 for
// Amazon Managed Service for Prometheus, which accepts no other
// authentication. Give it to NewPrometheus.
type SigV4RoundTripper struct {
	Credentials aws.CredentialsProvider
	Region      string
	Next        http.RoundTripper // nil: http.DefaultTransport
	Now         func() time.Time  // the signing time; injected like Reader.Now
}

// RoundTrip signs a copy of the request (a RoundTripper must not change its
// argument) and sends it. The signature covers the body, so the body is
// read whole first: a Prometheus query is a small form.
func (t SigV4RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readAll(req)
	if err != nil {
		return nil, err
	}
	if t.Now == nil || t.Credentials == nil || t.Region == "" {
		return nil, errors.New("sigv4: Credentials, Region and Now must be set")
	}
	ctx := req.Context()
	creds, err := t.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("sigv4: credentials: %w", err)
	}
	signed := req.Clone(ctx)
	signed.Body = io.NopCloser(bytes.NewReader(body))
	signed.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	signed.ContentLength = int64(len(body))
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, signed, hex.EncodeToString(sum[:]), sigV4Service, t.Region, t.Now()); err != nil {
		return nil, fmt.Errorf("sigv4: sign: %w", err)
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(signed)
}

// readAll reads and closes the request's body (nil for none).
func readAll(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("sigv4: read body: %w", err)
	}
	return b, nil
}
