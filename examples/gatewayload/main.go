// Command gatewayload measures Myriarch's OpAMP gateway against a baseline
// OpAMP server written on opamp-go's server package, with the same fleet of
// idle opamp-go WebSocket clients, against DynamoDB Local. See the section
// "Measurements" of docs/scale.md for what it prints and how it measures.
//
// Each server is this program run again (-role gateway or -role baseline)
// as its own process, so that its RSS (/proc/<pid>/status VmRSS) and CPU
// (/proc/<pid>/stat utime+stime) are its alone; the clients run here (with
// -together each fleet runs in a process of its own, -role fleet). Per
// fleet size it prints, for each server: the time until every agent had
// its first answer, RSS per agent (after connect and a settle, minus the
// RSS before any agent; also after runtime.GC and debug.FreeOSMemory), CPU
// seconds per 1,000 agents per heartbeat, and the gateway's DynamoDB reads
// and writes per connect and per heartbeat (adapters/store Usage, read from the
// gateway's debug address). With -wave it then pushes one configuration to
// -wave agents through the store (SetDesiredHash, as the engine does) and
// prints the time until all of them received it.
//
// Run it with `make gatewayload` (DynamoDB Local around it); it refuses to
// run without AWS_ENDPOINT_URL_DYNAMODB.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store"
)

const agentToken = "gatewayload-token"

type options struct {
	sizes              []int
	heartbeat          time.Duration
	spread             time.Duration
	together           bool
	window             time.Duration
	settle             time.Duration
	poll               time.Duration
	wave               int
	servers            []string
	cpuProfile         string
	baselineCPUProfile string
	memProfile         string
	logDir             string
	role, prefix       string
	url, rawSizes      string
}

func main() {
	o := parseFlags()
	if o.role == "fleet" {
		n, err := strconv.Atoi(o.rawSizes)
		if err == nil {
			err = serveFleet(o.url, n, o.heartbeat, o.spread)
		}
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	if o.role != "" {
		if err := serveRole(o.role, o.prefix, o.heartbeat, o.poll); err != nil {
			log.Fatal(err)
		}
		return
	}
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		log.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: run `make gatewayload` (DynamoDB Local)")
	}
	raiseFileLimit()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func parseFlags() options {
	var o options
	var sizes, servers string
	quick := flag.Bool("quick", false, "CI-size run: 200 agents, 2 s heartbeat, 10 s window, wave of 200")
	flag.StringVar(&sizes, "n", "1000,5000,10000", "fleet sizes, comma-separated")
	flag.DurationVar(&o.heartbeat, "heartbeat", 30*time.Second, "agent heartbeat (the CPU figure is per heartbeat)")
	flag.DurationVar(&o.spread, "spread", 0, "start the agents evenly over this time instead of all at once (their heartbeats keep that phase; 0: a connect storm)")
	flag.BoolVar(&o.together, "together", false, "measure the servers side by side over the same window, each with its own fleet in a process of its own, instead of one after the other (no wave)")
	flag.DurationVar(&o.window, "window", 60*time.Second, "CPU and DynamoDB measurement window")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "wait after connect before RSS is read")
	flag.DurationVar(&o.poll, "poll-interval", time.Second, "gateway's lagging-index poll interval")
	flag.IntVar(&o.wave, "wave", 1000, "agents a configuration is pushed to after the idle measurement (0: none)")
	flag.StringVar(&servers, "servers", "baseline,gateway", "servers to measure")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the gateway over the window of the largest size to this file")
	flag.StringVar(&o.baselineCPUProfile, "baseline-cpuprofile", "", "write a CPU profile of the baseline over the window of the largest size to this file (to compare with -cpuprofile, taken the same way)")
	flag.StringVar(&o.memProfile, "memprofile", "", "write a heap profile of the gateway after connect of the largest size to this file")
	flag.StringVar(&o.logDir, "logdir", "", "directory for the servers' stderr [a temporary one]")
	flag.StringVar(&o.role, "role", "", "internal: run as the gateway or baseline server, or as a fleet (-together)")
	flag.StringVar(&o.prefix, "table-prefix", "", "internal: tables of -role gateway")
	flag.StringVar(&o.url, "url", "", "internal: the server of -role fleet")
	flag.Parse()
	o.rawSizes = sizes
	if *quick {
		sizes, o.heartbeat, o.window, o.settle, o.wave = "200", 2*time.Second, 10*time.Second, 3*time.Second, 200
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-n %q: want positive numbers", sizes)
		}
		o.sizes = append(o.sizes, n)
	}
	o.servers = strings.Split(servers, ",")
	return o
}

func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) // children inherit it
	}
}

func run(o options) error {
	ctx := context.Background()
	st, raw, prefix, err := tables(ctx)
	if err != nil {
		return err
	}
	if o.logDir == "" {
		if o.logDir, err = os.MkdirTemp("", "gatewayload-"); err != nil {
			return err
		}
	}
	fmt.Printf("gatewayload: heartbeat %s, spread %s, window %s, settle %s, poll %s, together %t; server logs in %s\n", o.heartbeat, o.spread, o.window, o.settle, o.poll, o.together, o.logDir)
	largest := o.sizes[len(o.sizes)-1]
	for _, n := range o.sizes {
		prof := func(role string) profiles {
			switch {
			case n != largest:
				return profiles{}
			case role == "gateway":
				return profiles{cpu: o.cpuProfile, mem: o.memProfile}
			case role == "baseline":
				return profiles{cpu: o.baselineCPUProfile}
			}
			return profiles{}
		}
		if err := measureSize(ctx, o, prefix, n, prof, st, raw); err != nil {
			return err
		}
	}
	return nil
}

// tables creates a fresh set of tables for this run.
func tables(ctx context.Context) (*store.Store, *dynamodb.Client, string, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	raw := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "gwload-" + hex.EncodeToString(b[:]) + "-"
	if err := store.CreateTables(ctx, raw, prefix); err != nil {
		return nil, nil, "", err
	}
	return store.New(raw, store.TablesWithPrefix(prefix)), raw, prefix, nil
}

func sub(a, b store.Usage) store.Usage {
	return store.Usage{Requests: a.Requests - b.Requests, ItemsRead: a.ItemsRead - b.ItemsRead, ItemsWritten: a.ItemsWritten - b.ItemsWritten,
		ReadUnits: a.ReadUnits - b.ReadUnits, WriteUnits: a.WriteUnits - b.WriteUnits}
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// serverProc is a running server process.
type serverProc struct {
	cmd          *exec.Cmd
	pid          int
	opamp, debug string
}

func startServer(o options, role, prefix string, n int) (*serverProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(fmt.Sprintf("%s/%s-%d.log", o.logDir, role, n))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-role", role, "-table-prefix", prefix, "-heartbeat", o.heartbeat.String(), "-poll-interval", o.poll.String())
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serverProc{cmd: cmd, pid: cmd.Process.Pid}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" {
		s.stop()
		return nil, fmt.Errorf("%s did not start (%q, %v): see %s", role, line, err, logf.Name())
	}
	s.opamp, s.debug = f[1], f[2]
	return s, nil
}

// stop ends the server's process group and waits for it.
func (s *serverProc) stop() {
	_ = syscall.Kill(-s.pid, syscall.SIGTERM)
	awaitExit(s.cmd)
}

// awaitExit waits for a child started in a process group of its own to
// exit, and kills the group after 10 s.
func awaitExit(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func (s *serverProc) get(path string, w io.Writer) error {
	resp, err := http.Get("http://" + s.debug + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

func (s *serverProc) fetch(path, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.get(path, f)
}

func (s *serverProc) usage() store.Usage {
	var u store.Usage
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.get("/debug/usage", pw)) }()
	_ = json.NewDecoder(pr).Decode(&u)
	_, _ = io.Copy(io.Discard, pr)
	return u
}
