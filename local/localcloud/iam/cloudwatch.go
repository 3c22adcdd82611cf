package iam

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// cloudwatchOps are the CloudWatch operations the local cloud knows, all
// authorized on "*": metric data has no resource-level permissions, and
// DescribeAlarms without names describes every alarm.
var cloudwatchOps = map[string]bool{
	"PutMetricData": true, "GetMetricData": true, "GetMetricStatistics": true,
	"ListMetrics": true, "DescribeAlarms": true,
}

// cloudwatchOperation finds the operation in whichever protocol the SDK
// speaks: aws-sdk-go-v2's cloudwatch uses Smithy RPC v2 CBOR
// (POST /service/GraniteServiceVersion20100801/operation/<Op>); older SDKs
// use the query protocol (Action=<Op> in a form body) or JSON 1.0
// (X-Amz-Target: GraniteServiceVersion20100801.<Op>).
func cloudwatchOperation(r *http.Request, body []byte) (Operation, error) {
	op := cloudwatchOpName(r, body)
	if !cloudwatchOps[op] {
		return Operation{Name: "monitoring " + op}, fmt.Errorf("the local cloud does not know the CloudWatch operation %q", op)
	}
	return Operation{Name: "monitoring " + op, Accesses: []Access{{"cloudwatch:" + op, "*"}}}, nil
}

func cloudwatchOpName(r *http.Request, body []byte) string {
	if _, op, ok := strings.Cut(r.URL.Path, "/operation/"); ok {
		return op
	}
	if _, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), "."); ok {
		return op
	}
	if form, err := url.ParseQuery(string(body)); err == nil {
		return form.Get("Action")
	}
	return ""
}
