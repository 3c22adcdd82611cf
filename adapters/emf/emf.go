// Package emf writes CloudWatch embedded metric format records: a Lambda
// publishes metrics by logging one JSON line per record, which CloudWatch
// Logs turns into metric data, so it needs no PutMetricData call or its IAM
// permission.
package emf

import (
	"encoding/json"
	"io"
	"time"
)

// Metric is one metric of a record: its name and unit ("Count",
// "Seconds", …); its value is the record's property of the same name.
type Metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// Record is one record: the metrics, in namespace, by one set of
// dimensions. Values holds the dimensions' values, the metrics' values and
// any other property (searchable in Logs Insights, not a dimension).
type Record struct {
	Namespace  string
	Dimensions []string
	Metrics    []Metric
	Values     map[string]any
}

type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []Metric   `json:"Metrics"`
}

type meta struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// Write writes the record at time at as one line.
func (r Record) Write(w io.Writer, at time.Time) error {
	out := make(map[string]any, len(r.Values)+1)
	for k, v := range r.Values {
		out[k] = v
	}
	dims := r.Dimensions
	if dims == nil {
		dims = []string{}
	}
	out["_aws"] = meta{Timestamp: at.UnixMilli(), CloudWatchMetrics: []directive{{Namespace: r.Namespace, Dimensions: [][]string{dims}, Metrics: r.Metrics}}}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}
