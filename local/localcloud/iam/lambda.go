package iam

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// lambdaOperation reads Lambda's REST paths. Invoke is
// POST /2015-03-31/functions/<name, name:qualifier or ARN>/invocations
// (with ?Qualifier=), authorized as lambda:InvokeFunction on the function
// ARN, qualified when the call is.
func lambdaOperation(s Scope, r *http.Request) (Operation, error) {
	path := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, "/2015-03-31/functions/")
	fn, tail, _ := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodPost || tail != "invocations" {
		return Operation{Name: "lambda " + r.Method + " " + path}, fmt.Errorf("the local cloud does not know the Lambda operation %s %s", r.Method, path)
	}
	name, err := url.PathUnescape(fn)
	if err != nil || name == "" {
		return Operation{Name: "lambda Invoke"}, fmt.Errorf("bad function name %q", fn)
	}
	arn := functionArn(s.Partition, s.Region, s.Account, name)
	if q := r.URL.Query().Get("Qualifier"); q != "" {
		arn += ":" + q
	}
	return Operation{Name: "lambda Invoke", Accesses: []Access{{"lambda:InvokeFunction", arn}}}, nil
}
