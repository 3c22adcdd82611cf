package gateread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// probeBodyLimit is how much of a probe's answer is read before the
// connection is closed: enough to drain a health page so that the
// connection is reused, not so much that a target streaming a large body
// holds a reading up.
const probeBodyLimit = 64 << 10

func (r Reader) probeCheck(p policy.Probe, stage gate.Vars, host gate.Host) check {
	scope := cmp.Or(host.Host, host.AgentID) // an agent without host is still named
	base := gate.Result{Kind: gate.KindProbe, Name: p.URL, Scope: scope, DryRun: p.DryRun}
	v := stage
	v.Host = host.Host
	return check{base: base, run: func(ctx context.Context) gate.Result {
		return r.probe(ctx, base, p, v, host)
	}}
}

// probe sends one GET to the probe's URL for the host and compares the
// status. Its own timeout bounds the whole exchange, headers and body.
func (r Reader) probe(ctx context.Context, base gate.Result, p policy.Probe, v gate.Vars, host gate.Host) gate.Result {
	if err := gate.ValidHost(host.Host); err != nil {
		return failed(base, fmt.Sprintf("agent %s: %v", host.AgentID, err))
	}
	timeout := cmp.Or(p.Timeout, policy.DefaultProbeTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gate.Substitute(p.URL, v), nil)
	if err != nil {
		return failed(base, err.Error())
	}
	resp, err := noRedirects(r.HTTP).Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return failed(base, fmt.Sprintf("no answer within %s", timeout))
		}
		return failed(base, err.Error())
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, probeBodyLimit))

	want := cmp.Or(p.ExpectStatus, policy.DefaultExpectStatus)
	res := base
	if resp.StatusCode != want {
		res.Red, res.Detail = true, fmt.Sprintf("status %d, want %d", resp.StatusCode, want)
	} else {
		res.Detail = fmt.Sprintf("status %d", resp.StatusCode)
	}
	return res
}

// noRedirects returns a copy of the client that does not follow redirects:
// a probe reads the target's own answer, and never goes to another host.
func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}
