package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// An address in use is refused with the flag and the make variable that
// move the service, for each address, before anything is printed: no half
// banner, no tokens above the error. The check comes before DynamoDB Local
// is needed.
func TestRun_AddressInUseNamesTheFlag(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "") // a stack that got as far as starting would fail otherwise
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, c := range []struct{ flag, want string }{
		{flag: "-sfn", want: "the Step Functions endpoint cannot listen on " + addr + ": bind: address already in use: choose another address with -sfn ADDR (make run SFN=ADDR)"},
		{flag: "-api", want: "the REST API cannot listen on " + addr + ": bind: address already in use: choose another address with -api ADDR (make run API=ADDR)"},
		{flag: "-gateway", want: "the OpAMP gateway cannot listen on " + addr + ": bind: address already in use: choose another address with -gateway ADDR (make run GATEWAY=ADDR)"},
		{flag: "-metrics-target", want: "the simulated fleet's metrics cannot listen on " + addr + ": bind: address already in use: choose another address with -metrics-target ADDR (make run METRICS=ADDR), or start no fleet with -agents 0 (make run AGENTS=0)"},
	} {
		args := map[string]string{"-api": "127.0.0.1:0", "-gateway": "127.0.0.1:0", "-sfn": "127.0.0.1:0", "-metrics-target": "127.0.0.1:0"}
		args[c.flag] = addr
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", "-agents", "2", "-api", args["-api"], "-gateway", args["-gateway"], "-sfn", args["-sfn"], "-metrics-target", args["-metrics-target"]}, &stdout, &stderr)
		if code != 1 || strings.TrimSpace(stderr.String()) != "myriarch-local: "+c.want {
			t.Errorf("%s in use: exit %d, stderr:\n%s\nwant %q", c.flag, code, stderr.String(), c.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%s in use: printed before the refusal:\n%s", c.flag, stdout.String())
		}
	}
}

// -data without DynamoDB Local on disk in that directory is refused: the
// state would not survive the restart it promises.
func TestRun_DataNeedsDynamoDBOnDisk(t *testing.T) {
	t.Setenv("DYNAMODB_LOCAL_DB_PATH", "")
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	if code := run([]string{"run", "-data", dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "needs DynamoDB Local on disk") {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
}

// With -gateway-process the gateway's address is checked before the
// process starts, and refused as the in-process gateway's is.
func TestRun_GatewayProcessAddressInUseNamesTheFlag(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-agents", "0", "-api", "127.0.0.1:0", "-sfn", "127.0.0.1:0", "-gateway", addr,
		"-gateway-process", "-gateway-binary", "/nonexistent/opamp-gateway"}, &stdout, &stderr)
	want := "the OpAMP gateway cannot listen on " + addr + ": bind: address already in use: choose another address with -gateway ADDR (make run GATEWAY=ADDR)"
	if code != 1 || !strings.Contains(stderr.String(), want) || stdout.Len() > 0 {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", code, stdout.String(), stderr.String(), want)
	}
}
