// Package gateread reads the health evidence of a stage of a rollout: HTTP
// probes to its targets, metric queries (Prometheus, CloudWatch) and active
// alerts (Alertmanager, CloudWatch alarms). A Reader performs one reading and
// judges each check with the pure rules of core/gate. It is an adapter: it
// holds the AWS SDK and the Prometheus client, which the core must not link
// (arch's test holds that), so only the engine's task and the binaries
// that build a Reader import it.
package gateread

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// Reader reads the evidence of a gate from the providers it is given. A
// provider left unset is "not configured": the checks that need it are red,
// so that a policy asking for evidence nobody can read never passes.
type Reader struct {
	Prometheus      promv1.API    // nil: not configured
	CloudWatch      CloudWatchAPI // nil: not configured
	AlertmanagerURL string        // empty: not configured
	// HTTP serves probes and Alertmanager; nil: a client with timeouts.
	HTTP *http.Client
	// Now is the time of the queries (Prometheus instant queries, the
	// CloudWatch window). Injected: nothing in core/ or adapters/ reads the clock.
	Now func() time.Time
	Log *slog.Logger // nil: no logs
	// MaxConcurrent bounds the checks in flight; 0 means 32. A stage of a
	// thousand targets probes them 32 at a time, not all at once.
	MaxConcurrent int
	// QueryTimeout bounds each metric query and alert read; 0 means 20s, less
	// than the default gate interval, so that a slow provider cannot stack
	// readings.
	QueryTimeout time.Duration
}

const (
	defaultMaxConcurrent = 32
	defaultQueryTimeout  = 20 * time.Second
)

// The errors of a provider that is not configured: they name the setting
// an operator has to give.
const (
	errNoPrometheus   = "no Prometheus configured (MYRIARCH_PROMETHEUS_URL)"
	errNoAlertmanager = "no Alertmanager configured (MYRIARCH_ALERTMANAGER_URL)"
	errNoCloudWatch   = "no CloudWatch client configured (AWS_REGION)"
)

// defaultHTTP is shared by the Readers without a client, so that readings
// reuse connections instead of each opening its own pool.
var defaultHTTP = &http.Client{
	Timeout: time.Minute, // a backstop: every request also has a context deadline
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	},
}

// check is one check of a reading, planned before any runs.
type check struct {
	base    gate.Result // Kind, Name, Scope and DryRun of its result
	timeout time.Duration
	run     func(ctx context.Context) gate.Result
}

// Read runs every check of h the request calls for, concurrently, and
// returns one result per check: probes (by URL and host), then metrics (by
// name and pass), then alerts and alarms. Every failure to read is a red
// result with Error set; Read itself never fails.
func (r Reader) Read(ctx context.Context, h policy.Health, req gate.Request) []gate.Result {
	r = r.withDefaults()
	results := r.runAll(ctx, r.plan(h, req))
	sortResults(results)
	r.logErrors(req, results)
	return results
}

func (r Reader) withDefaults() Reader {
	if r.HTTP == nil {
		r.HTTP = defaultHTTP
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.MaxConcurrent <= 0 {
		r.MaxConcurrent = defaultMaxConcurrent
	}
	if r.QueryTimeout <= 0 {
		r.QueryTimeout = defaultQueryTimeout
	}
	return r
}

// plan lists the checks of one reading: each probe for every host; unless
// the request is a batch's (ProbesOnly), each metric for every pass, and
// the alerts. A request without passes still reads its metrics once, for
// the stage as a whole, so that a caller's mistake cannot skip them.
func (r Reader) plan(h policy.Health, req gate.Request) []check {
	stage := gate.Vars{Fleet: req.Fleet, Wave: req.Wave, Stage: req.Stage}
	var cs []check
	for _, p := range h.Probes {
		for _, host := range req.Hosts {
			cs = append(cs, r.probeCheck(p, stage, host))
		}
	}
	if req.ProbesOnly {
		return cs
	}
	passes := req.Passes
	if len(passes) == 0 {
		passes = []gate.Pass{{}}
	}
	for _, m := range h.Metrics {
		for _, pass := range passes {
			cs = append(cs, r.metricCheck(m, stage, pass))
		}
	}
	if h.Alerts != nil {
		cs = append(cs, r.alertChecks(*h.Alerts, req)...)
	}
	return cs
}

func (r Reader) metricCheck(m policy.Metric, stage gate.Vars, pass gate.Pass) check {
	v := stage
	v.Region, v.Zone = pass.Region, pass.Zone
	base := gate.Result{Kind: gate.KindMetric, Name: m.Name, Scope: pass.Name, DryRun: m.DryRun}
	run := func(ctx context.Context) gate.Result {
		if r.Now == nil {
			return failed(base, "no clock: Reader.Now is not set")
		}
		switch provider(m) {
		case policy.ProviderPrometheus:
			if r.Prometheus == nil {
				return failed(base, errNoPrometheus)
			}
			return r.queryPrometheus(ctx, m, v, pass.Name)
		case policy.ProviderCloudWatch:
			if r.CloudWatch == nil {
				return failed(base, errNoCloudWatch)
			}
			return r.queryCloudWatch(ctx, m, v, pass.Name)
		}
		return failed(base, fmt.Sprintf("unknown metric provider %q", m.Provider))
	}
	return check{base: base, timeout: r.QueryTimeout, run: run}
}

// provider of a metric: prometheus unless said otherwise, but a metric that
// names a single CloudWatch metric can only be read from CloudWatch.
func provider(m policy.Metric) string {
	if m.Provider == "" && m.CloudWatch != nil {
		return policy.ProviderCloudWatch
	}
	return cmp.Or(m.Provider, policy.ProviderPrometheus)
}

// alertChecks: Alertmanager is read unless the alerts name CloudWatch
// alarms and no blockOn condition (then alarms alone were asked for); the
// alarms, by names and by prefix, are a check each.
func (r Reader) alertChecks(a policy.Alerts, req gate.Request) []check {
	var cs []check
	if len(a.BlockOn) > 0 || a.CloudWatchAlarms == nil {
		base := gate.Result{Kind: gate.KindAlert, Name: "alertmanager", DryRun: a.DryRun}
		cs = append(cs, check{base: base, timeout: r.QueryTimeout, run: func(ctx context.Context) gate.Result {
			if r.AlertmanagerURL == "" {
				return failed(base, errNoAlertmanager)
			}
			return r.readAlertmanager(ctx, base, a.BlockOn, req)
		}})
	}
	if a.CloudWatchAlarms != nil {
		for _, sel := range alarmSelectors(*a.CloudWatchAlarms, req) {
			base := gate.Result{Kind: gate.KindAlarm, Name: sel.name, DryRun: a.DryRun}
			cs = append(cs, check{base: base, timeout: r.QueryTimeout, run: func(ctx context.Context) gate.Result {
				if r.CloudWatch == nil {
					return failed(base, errNoCloudWatch)
				}
				return r.readAlarms(ctx, base, sel)
			}})
		}
	}
	return cs
}

// runAll runs the checks, at most MaxConcurrent at once, each result in the
// slot of its check.
func (r Reader) runAll(ctx context.Context, cs []check) []gate.Result {
	results := make([]gate.Result, len(cs))
	sem := make(chan struct{}, r.MaxConcurrent)
	var wg sync.WaitGroup
	for i, c := range cs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = runOne(ctx, c)
		})
	}
	wg.Wait()
	return results
}

// runOne runs a check under its timeout. A panic in a provider's client is
// that check's red result, not the end of the process.
func runOne(ctx context.Context, c check) (res gate.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = failed(c.base, fmt.Sprintf("panic: %v", p))
		}
		res.DryRun = c.base.DryRun
	}()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return c.run(ctx)
}

// failed is the red result of a check that could not be read.
func failed(base gate.Result, err string) gate.Result {
	base.Red, base.Error, base.Detail, base.Value = true, err, "", nil
	return base
}

var kindOrder = map[gate.Kind]int{gate.KindProbe: 0, gate.KindMetric: 1, gate.KindAlert: 2, gate.KindAlarm: 3}

func sortResults(rs []gate.Result) {
	slices.SortStableFunc(rs, func(a, b gate.Result) int {
		return cmp.Or(
			cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Scope, b.Scope),
		)
	})
}

// logErrors: a check that could not be read is an operator's problem (a
// provider down, a query rejected), not the rollout's; say so in the logs.
func (r Reader) logErrors(req gate.Request, rs []gate.Result) {
	for _, res := range rs {
		if res.Error != "" {
			r.Log.Warn("gate check not read", "fleet", req.Fleet, "wave", req.Wave, "stage", req.Stage,
				"kind", res.Kind, "name", res.Name, "scope", res.Scope, "error", res.Error)
		}
	}
}
