package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/revision"
)

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

// running is one server under measurement: its process, its fleet, and
// what was measured of it so far.
type running struct {
	r       result
	srv     *serverProc
	f       *fleet
	child   *fleetProc // the fleet in a process of its own with -together (f is nil then)
	prof    profiles
	u0      store.Usage
	cpuProf chan error
}

// measureSize measures each server of o.servers with n agents: one after
// the other, or side by side with -together, so that both are measured
// over the same window on the same machine (this machine's syscall costs
// vary by 2 × and more between runs taken minutes apart), each with its own
// fleet; with -spread its agents start in pairs, one of each fleet at the
// same moment, so that both servers see the same heartbeat arrivals.
func measureSize(ctx context.Context, o options, prefix string, n int, prof func(role string) profiles, st *store.Store, raw *dynamodb.Client) error {
	groups := [][]string{o.servers}
	if !o.together {
		groups = nil
		for _, role := range o.servers {
			groups = append(groups, []string{role})
		}
	}
	for _, roles := range groups {
		if err := measureTogether(ctx, o, prefix, n, roles, prof, st, raw); err != nil {
			return err
		}
	}
	return nil
}

// measureTogether starts the servers of roles, connects a fleet to each and
// measures them over one window; one role is the measurement one after the
// other, with the fleet in this process.
func measureTogether(ctx context.Context, o options, prefix string, n int, roles []string, prof func(role string) profiles, st *store.Store, raw *dynamodb.Client) error {
	xs := make([]*running, len(roles))
	for i, role := range roles {
		x, err := start(o, role, prefix, n, prof(role))
		if err != nil {
			return fmt.Errorf("%s, %d agents: %w", role, n, err)
		}
		defer x.stop()
		xs[i] = x
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	connect := func(x *running) error {
		var err error
		url := "ws://" + x.srv.opamp + "/v1/opamp"
		if len(xs) > 1 {
			x.child, x.r.connect, err = startFleetProc(o, url, n)
			return err
		}
		x.f, x.r.connect, err = startFleet(cctx, url, n, o.heartbeat, o.spread)
		return err
	}
	errs := make([]error, len(xs))
	if o.spread > 0 { // in pairs: both fleets start at once
		var wg sync.WaitGroup
		for i, x := range xs {
			wg.Go(func() { errs[i] = connect(x) })
		}
		wg.Wait()
	} else { // a storm each, one after the other
		for i, x := range xs {
			errs[i] = connect(x)
		}
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s, %d agents: %w", roles[i], n, err)
		}
	}
	time.Sleep(o.settle)
	for _, x := range xs {
		if err := x.settled(); err != nil {
			return fmt.Errorf("%s, %d agents: %w", x.r.role, n, err)
		}
	}
	if err := window(o, xs); err != nil {
		return err
	}
	for _, x := range xs {
		if err := x.finish(ctx, o, st, raw, prefix); err != nil {
			return fmt.Errorf("%s, %d agents: %w", x.r.role, n, err)
		}
		x.r.print()
	}
	return nil
}

// start starts a server and reads its RSS before any agent.
func start(o options, role, prefix string, n int, prof profiles) (*running, error) {
	srv, err := startServer(o, role, prefix, n)
	if err != nil {
		return nil, err
	}
	x := &running{r: result{role: role, n: n}, srv: srv, prof: prof}
	time.Sleep(time.Second)
	if x.r.idleRSS, err = rssBytes(srv.pid); err != nil {
		x.stop()
		return nil, err
	}
	x.u0 = srv.usage()
	return x, nil
}

func (x *running) stop() {
	if x.f != nil {
		x.f.stop()
	}
	if x.child != nil {
		x.child.stop()
	}
	x.srv.stop()
}

// settled reads what connect and settle left: store usage, RSS, the heap.
func (x *running) settled() error {
	var err error
	x.r.connectUsage = sub(x.srv.usage(), x.u0)
	if x.r.rss, err = rssBytes(x.srv.pid); err != nil {
		return err
	}
	if x.prof.mem != "" {
		return x.srv.fetch("/debug/pprof/heap", x.prof.mem)
	}
	return nil
}

// window measures CPU and DynamoDB calls of idle agents over o.window, of
// all xs over the same window.
func window(o options, xs []*running) error {
	c0, u1 := make([]time.Duration, len(xs)), make([]store.Usage, len(xs))
	for i, x := range xs {
		if x.prof.cpu != "" {
			x.cpuProf = make(chan error, 1)
			go func() {
				x.cpuProf <- x.srv.fetch(fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(o.window.Seconds())), x.prof.cpu)
			}()
		}
		c0[i], u1[i] = must(cpuTime(x.srv.pid)), x.srv.usage()
	}
	t0 := time.Now()
	time.Sleep(o.window)
	elapsed := time.Since(t0)
	for i, x := range xs {
		c1 := must(cpuTime(x.srv.pid))
		x.r.windowUsage = sub(x.srv.usage(), u1[i])
		x.r.heartbeats = float64(x.r.n) * elapsed.Seconds() / o.heartbeat.Seconds()
		x.r.cpuPer1000PerHeartbeat = (c1 - c0[i]).Seconds() / (x.r.heartbeats / 1000)
	}
	for _, x := range xs {
		if x.cpuProf != nil {
			if err := <-x.cpuProf; err != nil {
				return err
			}
		}
	}
	return nil
}

// finish reads RSS and the heap after a GC, then pushes the wave.
func (x *running) finish(ctx context.Context, o options, st *store.Store, raw *dynamodb.Client, prefix string) error {
	var gc strings.Builder
	if err := x.srv.get("/debug/gc", &gc); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(gc.String()), &x.r.mem); err != nil {
		return err
	}
	var err error
	if x.r.rssGC, err = rssBytes(x.srv.pid); err != nil {
		return err
	}
	if x.r.role == "gateway" && o.wave > 0 && x.f != nil {
		return pushWave(ctx, &x.r, min(o.wave, x.r.n), x.f, st, raw, prefix)
	}
	return nil
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
		"sv": &dtypes.AttributeValueMemberN{Value: strconv.Itoa(store.SchemaVersion)}, // as the store writes it (adapters/store configs.go)
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
