package gateread

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/smithy-go/encoding/cbor"
)

// CloudWatch as the SDK speaks to it: this SDK version uses the Smithy RPC
// v2 CBOR protocol (POST /service/GraniteServiceVersion20100801/operation/Op,
// bodies in CBOR, timestamps as tag 1 epoch seconds). The fake answers in
// that protocol, so the real client serializes every request and parses
// every answer. The CBOR codec is smithy-go's, which the SDK itself uses.

const cloudWatchOpPath = "/service/GraniteServiceVersion20100801/operation/"

// cwCall is one request the SDK sent: its operation and decoded body.
type cwCall struct {
	Op   string
	Body map[string]any
}

// cwAnswer answers the n-th call (from 0) of an operation: a status and a
// body, encoded in CBOR.
type cwAnswer func(op string, n int, body map[string]any) (status int, reply map[string]any)

// fakeCloudWatch is an httptest server that speaks rpcv2Cbor, and a real
// SDK client pointed at it.
type fakeCloudWatch struct {
	client *cloudwatch.Client
	mu     sync.Mutex
	calls  []cwCall
}

func newFakeCloudWatch(t *testing.T, answer cwAnswer) *fakeCloudWatch {
	t.Helper()
	f := &fakeCloudWatch{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := strings.CutPrefix(r.URL.Path, cloudWatchOpPath)
		if !ok || r.Header.Get("Smithy-Protocol") != "rpc-v2-cbor" || r.Method != http.MethodPost {
			t.Errorf("not an rpcv2Cbor call: %s %s %v", r.Method, r.URL.Path, r.Header)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		v, err := cbor.Decode(raw)
		if err != nil {
			t.Errorf("%s: body is not CBOR: %v", op, err)
			return
		}
		body, _ := goValue(v).(map[string]any)
		f.mu.Lock()
		n := 0
		for _, c := range f.calls {
			if c.Op == op {
				n++
			}
		}
		f.calls = append(f.calls, cwCall{Op: op, Body: body})
		f.mu.Unlock()

		status, reply := answer(op, n, body)
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.Header().Set("Content-Type", "application/cbor")
		w.WriteHeader(status)
		_, _ = w.Write(cbor.Encode(cborValue(reply)))
	}))
	t.Cleanup(srv.Close)
	f.client = cloudwatch.New(cloudwatch.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		HTTPClient:   srv.Client(),
	})
	return f
}

func (f *fakeCloudWatch) Calls() []cwCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]cwCall(nil), f.calls...)
}

// cborValue encodes the Go values of a recorded answer.
func cborValue(v any) cbor.Value {
	switch v := v.(type) {
	case map[string]any:
		m := cbor.Map{}
		for k, x := range v {
			m[k] = cborValue(x)
		}
		return m
	case []any:
		l := make(cbor.List, len(v))
		for i, x := range v {
			l[i] = cborValue(x)
		}
		return l
	case []float64:
		l := make(cbor.List, len(v))
		for i, x := range v {
			l[i] = cbor.Float64(x)
		}
		return l
	case []time.Time:
		l := make(cbor.List, len(v))
		for i, x := range v {
			l[i] = cborValue(x)
		}
		return l
	case string:
		return cbor.String(v)
	case float64:
		return cbor.Float64(v)
	case bool:
		return cbor.Bool(v)
	case time.Time:
		return &cbor.Tag{ID: 1, Value: cbor.Float64(float64(v.UnixMilli()) / 1e3)}
	}
	panic(fmt.Sprintf("cborValue: %T", v))
}

// goValue decodes a request: maps, lists, strings, numbers (float64),
// booleans and timestamps (time.Time, UTC).
func goValue(v cbor.Value) any {
	switch v := v.(type) {
	case cbor.Map:
		m := map[string]any{}
		for k, x := range v {
			m[k] = goValue(x)
		}
		return m
	case cbor.List:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = goValue(x)
		}
		return l
	case cbor.String:
		return string(v)
	case cbor.Uint:
		return float64(v)
	case cbor.NegInt:
		return -1 - float64(v)
	case cbor.Float32:
		return float64(v)
	case cbor.Float64:
		return float64(v)
	case cbor.Bool:
		return bool(v)
	case *cbor.Tag:
		if ts, err := cbor.AsTime(v); err == nil {
			return ts.UTC()
		}
	}
	return fmt.Sprintf("unexpected CBOR %T", v)
}
