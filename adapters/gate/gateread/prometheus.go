package gateread

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
)

// NewPrometheus is the API of the Prometheus server at url (the server's
// root, as in MYRIARCH_PROMETHEUS_URL). rt carries the requests: nil for
// the client's default transport, a SigV4RoundTripper for Amazon Managed
// Service for Prometheus (url then ends in /workspaces/ws-…).
func NewPrometheus(url string, rt http.RoundTripper) (promv1.API, error) {
	c, err := api.NewClient(api.Config{Address: url, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %s: %w", url, err)
	}
	return promv1.NewAPI(c), nil
}

// queryPrometheus runs the metric's PromQL as an instant query at Now and
// judges what it returns: a scalar, or a vector whose series are judged
// together (JudgeSeries). An empty vector is no data.
func (r Reader) queryPrometheus(ctx context.Context, m policy.Metric, v gate.Vars, scope string) gate.Result {
	base := gate.Result{Kind: gate.KindMetric, Name: m.Name, Scope: scope}
	query := gate.Substitute(m.Query, v)
	val, warnings, _, err := r.Prometheus.Query(ctx, query, r.Now())
	if err != nil {
		return failed(base, fmt.Sprintf("prometheus query %q: %v", query, err))
	}
	if len(warnings) > 0 {
		r.Log.Info("prometheus query warnings", "metric", m.Name, "scope", scope, "query", query, "warnings", warnings)
	}
	values, err := sampleValues(val)
	if err != nil {
		return failed(base, fmt.Sprintf("prometheus query %q: %v", query, err))
	}
	return gate.JudgeSeries(m.Name, scope, values, m.Min, m.Max)
}

// sampleValues are the float values of an instant query's result. A range
// vector or a string has no value to hold against a bound, and neither has
// a native histogram: the query should say which number it means
// (histogram_quantile, histogram_count…).
func sampleValues(v model.Value) ([]float64, error) {
	switch v := v.(type) {
	case *model.Scalar:
		return []float64{float64(v.Value)}, nil
	case model.Vector:
		values := make([]float64, 0, len(v))
		for _, s := range v {
			if s.Histogram != nil {
				return nil, fmt.Errorf("series %s is a native histogram: query a number of it", s.Metric)
			}
			values = append(values, float64(s.Value))
		}
		return values, nil
	case nil:
		return nil, fmt.Errorf("no result")
	}
	return nil, fmt.Errorf("result is a %s, want an instant vector or a scalar", v.Type())
}
