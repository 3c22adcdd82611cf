package lambdas

import (
	"testing"
	"time"
)

// Each row is one of RIE's replies and what the Invoke API reports.
func TestClassify(t *testing.T) {
	cases := []struct {
		name      string
		reply     rieReply
		failed    bool
		errorType string
		replace   bool
		err       bool
	}{
		{name: "success", reply: rieReply{200, []byte(`{"ok":true}`)}},
		{name: "a string", reply: rieReply{200, []byte(`"errorType"`)}},
		{name: "returned error", reply: rieReply{200, []byte(`{"errorMessage":"boom","errorType":"errBoom"}`)}, failed: true, errorType: "errBoom"},
		{name: "with stack trace", reply: rieReply{200, []byte(`{"errorMessage":"x","errorType":"T","stackTrace":[]}`)}, failed: true, errorType: "T"},
		{name: "a reply with more fields", reply: rieReply{200, []byte(`{"errorMessage":"x","errorType":"T","data":1}`)}},
		{name: "no errorType", reply: rieReply{200, []byte(`{"errorMessage":"x"}`)}},
		{name: "timeout", reply: rieReply{200, []byte(`Task timed out after 3.00 seconds`)}, failed: true, errorType: "Sandbox.Timedout", replace: true},
		{name: "runtime exit", reply: rieReply{502, []byte(`{"errorType":"Runtime.ExitError","errorMessage":"exit status 3"}`)}, failed: true, errorType: "Runtime.ExitError", replace: true},
		{name: "init exit", reply: rieReply{502, nil}, failed: true, errorType: "Runtime.ExitError", replace: true},
		{name: "RIE failure", reply: rieReply{500, nil}, replace: true, err: true},
		{name: "RIE answers text", reply: rieReply{502, []byte("bad")}, replace: true, err: true},
	}
	for _, c := range cases {
		v, err := classify("req-1", c.reply)
		if v.result.Failed() != c.failed || v.result.ErrorType != c.errorType || v.replace != c.replace || (err != nil) != c.err {
			t.Errorf("%s: %+v replace=%v err=%v", c.name, v.result, v.replace, err)
		}
	}
	v, _ := classify("req-1", rieReply{200, []byte(`Task timed out after 3.00 seconds`)})
	if want := `{"errorType":"Sandbox.Timedout","errorMessage":"RequestId: req-1 Error: Task timed out after 3.00 seconds"}`; string(v.result.Payload) != want {
		t.Errorf("timeout payload %s, want %s", v.result.Payload, want)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	cases := []struct {
		reserved, max, limit int
	}{
		{reserved: -1, max: 4, limit: 4},  // no reservation: the account's share
		{reserved: 0, max: 4, limit: 0},   // throttled always
		{reserved: 1, max: 4, limit: 1},   // the planner
		{reserved: 10, max: 4, limit: 10}, // a reservation above the share is the function's own
	}
	for _, c := range cases {
		if got, _ := concurrencyLimit(Function{ReservedConcurrency: c.reserved}, c.max); got != c.limit {
			t.Errorf("reserved %d, max %d: limit %d, want %d", c.reserved, c.max, got, c.limit)
		}
	}
}

func TestTimeoutSeconds(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want int
	}{{d: 3 * time.Second, want: 3}, {d: 1500 * time.Millisecond, want: 2}, {d: 0, want: 1}, {d: 300 * time.Second, want: 300}}
	for _, c := range cases {
		if got := timeoutSeconds(c.d); got != c.want {
			t.Errorf("%s: %d, want %d", c.d, got, c.want)
		}
	}
}
