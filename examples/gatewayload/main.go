// Command gatewayload measures Myriarch's OpAMP gateway against a baseline
// OpAMP server written on opamp-go's server package, with the same fleet of
// idle opamp-go WebSocket clients, against DynamoDB Local. See the section
// "Measurements" of docs/scale.md for what it prints and how it measures.
//
// Each server is this program run again (-role gateway or -role baseline)
// as its own process, so that its RSS (/proc/<pid>/status VmRSS) and CPU
// (/proc/<pid>/stat utime+stime) are its alone; the clients run here. Per
// fleet size it prints, for each server: the time until every agent had
// its first answer, RSS per agent (after connect and a settle, minus the
// RSS before any agent; also after runtime.GC and debug.FreeOSMemory), CPU
// seconds per 1,000 agents per heartbeat, and the gateway's DynamoDB reads
// and writes per connect and per heartbeat (pkg/store Usage, read from the
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/pkg/revision"
	"github.com/myriarch/myriarch/pkg/store"
)

const agentToken = "gatewayload-token"

type options struct {
	sizes              []int
	heartbeat          time.Duration
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
}

func main() {
	o := parseFlags()
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
	flag.DurationVar(&o.window, "window", 60*time.Second, "CPU and DynamoDB measurement window")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "wait after connect before RSS is read")
	flag.DurationVar(&o.poll, "poll-interval", time.Second, "gateway's lagging-index poll interval")
	flag.IntVar(&o.wave, "wave", 1000, "agents a configuration is pushed to after the idle measurement (0: none)")
	flag.StringVar(&servers, "servers", "baseline,gateway", "servers to measure")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the gateway over the window of the largest size to this file")
	flag.StringVar(&o.baselineCPUProfile, "baseline-cpuprofile", "", "write a CPU profile of the baseline over the window of the largest size to this file (to compare with -cpuprofile, taken the same way)")
	flag.StringVar(&o.memProfile, "memprofile", "", "write a heap profile of the gateway after connect of the largest size to this file")
	flag.StringVar(&o.logDir, "logdir", "", "directory for the servers' stderr [a temporary one]")
	flag.StringVar(&o.role, "role", "", "internal: run as the gateway or baseline server")
	flag.StringVar(&o.prefix, "table-prefix", "", "internal: tables of -role gateway")
	flag.Parse()
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
	fmt.Printf("gatewayload: heartbeat %s, window %s, settle %s, poll %s; server logs in %s\n", o.heartbeat, o.window, o.settle, o.poll, o.logDir)
	largest := o.sizes[len(o.sizes)-1]
	for _, n := range o.sizes {
		for _, role := range o.servers {
			prof := profiles{}
			if role == "gateway" && n == largest {
				prof = profiles{cpu: o.cpuProfile, mem: o.memProfile}
			}
			if role == "baseline" && n == largest {
				prof = profiles{cpu: o.baselineCPUProfile}
			}
			r, err := measure(ctx, o, role, prefix, n, prof, st, raw)
			if err != nil {
				return fmt.Errorf("%s, %d agents: %w", role, n, err)
			}
			r.print()
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

type profiles struct{ cpu, mem string }

type result struct {
	role                          string
	n                             int
	connect                       time.Duration
	idleRSS, rss, rssGC           int64
	cpuPer1000PerHeartbeat        float64 // CPU seconds
	heartbeats                    float64 // agent heartbeats in the window
	connectUsage, windowUsage     store.Usage
	mem                           struct{ HeapInuse, StackInuse, Goroutines int64 } // after runtime.GC
	wave                          int
	waveWrite, wavePush, p50, p95 time.Duration
}

func (r result) print() {
	perAgent := func(b int64) float64 { return float64(b) / float64(r.n) / 1024 }
	fmt.Printf("%-8s N=%-6d connect %6.1fs  RSS/agent %5.1f KB (after GC %5.1f KB; idle %5.1f MB)  CPU %.4f s/1000 agents/heartbeat\n",
		r.role, r.n, r.connect.Seconds(), perAgent(r.rss-r.idleRSS), perAgent(r.rssGC-r.idleRSS), float64(r.idleRSS)/(1<<20), r.cpuPer1000PerHeartbeat)
	fmt.Printf("         after GC: heap %.1f KB, stacks %.1f KB per agent, %.2f goroutines per agent",
		perAgent(r.mem.HeapInuse), perAgent(r.mem.StackInuse), float64(r.mem.Goroutines)/float64(r.n))
	if r.role == "gateway" {
		fmt.Printf("\n         connect: %.2f requests %.2f reads %.2f writes per agent; idle: %.3f reads %.3f writes per heartbeat (%.0f heartbeats, %s)",
			float64(r.connectUsage.Requests)/float64(r.n), float64(r.connectUsage.ItemsRead)/float64(r.n), float64(r.connectUsage.ItemsWritten)/float64(r.n),
			float64(r.windowUsage.ItemsRead)/r.heartbeats, float64(r.windowUsage.ItemsWritten)/r.heartbeats, r.heartbeats, r.windowUsage)
		if r.wave > 0 {
			fmt.Printf("\n         wave of %d: SetDesiredHash %.2fs, all received %.2fs after it began (arrival p50 %.2fs p95 %.2fs)",
				r.wave, r.waveWrite.Seconds(), r.wavePush.Seconds(), r.p50.Seconds(), r.p95.Seconds())
		}
	}
	fmt.Println()
}

// measure starts one server, connects n agents, measures, stops both.
func measure(ctx context.Context, o options, role, prefix string, n int, prof profiles, st *store.Store, raw *dynamodb.Client) (result, error) {
	r := result{role: role, n: n}
	srv, err := startServer(o, role, prefix, n)
	if err != nil {
		return r, err
	}
	defer srv.stop()
	time.Sleep(time.Second)
	if r.idleRSS, err = rssBytes(srv.pid); err != nil {
		return r, err
	}
	u0 := srv.usage()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	f, took, err := startFleet(cctx, "ws://"+srv.opamp+"/v1/opamp", n, o.heartbeat)
	defer f.stop()
	if err != nil {
		return r, err
	}
	r.connect = took
	time.Sleep(o.settle)
	r.connectUsage = sub(srv.usage(), u0)
	if r.rss, err = rssBytes(srv.pid); err != nil {
		return r, err
	}
	if prof.mem != "" {
		if err := srv.fetch("/debug/pprof/heap", prof.mem); err != nil {
			return r, err
		}
	}

	// The window: CPU and DynamoDB calls of idle agents.
	var profDone chan error
	if prof.cpu != "" {
		profDone = make(chan error, 1)
		secs := int(o.window.Seconds())
		go func() { profDone <- srv.fetch(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), prof.cpu) }()
	}
	c0, u1, t0 := must(cpuTime(srv.pid)), srv.usage(), time.Now()
	time.Sleep(o.window)
	c1, u2, elapsed := must(cpuTime(srv.pid)), srv.usage(), time.Since(t0)
	r.windowUsage = sub(u2, u1)
	r.heartbeats = float64(n) * elapsed.Seconds() / o.heartbeat.Seconds()
	r.cpuPer1000PerHeartbeat = (c1 - c0).Seconds() / (r.heartbeats / 1000)
	if profDone != nil {
		if err := <-profDone; err != nil {
			return r, err
		}
	}
	var gc strings.Builder
	if err := srv.get("/debug/gc", &gc); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(gc.String()), &r.mem); err != nil {
		return r, err
	}
	if r.rssGC, err = rssBytes(srv.pid); err != nil {
		return r, err
	}

	if role == "gateway" && o.wave > 0 {
		if err := pushWave(ctx, &r, min(o.wave, n), f, st, raw, prefix); err != nil {
			return r, err
		}
	}
	return r, nil
}

// pushWave stores a new configuration, sets it as the desired hash of the
// first k agents in one SetDesiredHash (what the engine does for the targets
// it starts) and waits until all k received it over their WebSocket.
func pushWave(ctx context.Context, r *result, k int, f *fleet, st *store.Store, raw *dynamodb.Client, prefix string) error {
	body := []byte(fmt.Sprintf("receivers: {otlp: {protocols: {grpc: {}}}}\n# wave %d %d\n", r.n, time.Now().UnixNano()))
	hash := revision.Hash(body)
	_, err := raw.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(store.TablesWithPrefix(prefix).Objects), Item: map[string]dtypes.AttributeValue{
		"pk": &dtypes.AttributeValueMemberS{Value: "config"}, "sk": &dtypes.AttributeValueMemberS{Value: hash},
		"contentType": &dtypes.AttributeValueMemberS{Value: store.ConfigContentType}, "body": &dtypes.AttributeValueMemberB{Value: body},
		"sv": &dtypes.AttributeValueMemberN{Value: strconv.Itoa(store.SchemaVersion)}, // as the store writes it (pkg/store configs.go)
	}})
	if err != nil {
		return fmt.Errorf("store the wave's configuration: %w", err)
	}
	all := f.expect(hash, k)
	t0 := time.Now()
	if err := st.SetDesiredHash(ctx, f.ids[:k], hash); err != nil {
		return err
	}
	r.wave, r.waveWrite = k, time.Since(t0)
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("wave: %d of %d agents received the configuration in 30 s", len(f.arrivals()), k)
	}
	r.wavePush = time.Since(t0)
	var lat []time.Duration
	for _, at := range f.arrivals() {
		lat = append(lat, at.Sub(t0))
	}
	r.p50, r.p95 = percentile(lat, 50), percentile(lat, 95)
	time.Sleep(2 * time.Second) // the applied reports
	return nil
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
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
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
