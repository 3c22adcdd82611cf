package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
)

// fleet is N opamp-go WebSocket clients in this process, idle but for
// their heartbeats; an agent that is sent a configuration reports it
// applied.
type fleet struct {
	clients []client.OpAMPClient
	ids     []string // agent ids (UUID form of the instance uid)
	first   sync.WaitGroup
	// configs: agent index → time the configuration of wantHash arrived.
	mu       sync.Mutex
	wantHash string
	got      map[int]time.Time
	gotAll   chan struct{}
	answered atomic.Int64
}

type nopLogger struct{}

func (nopLogger) Debugf(context.Context, string, ...any) {}
func (nopLogger) Errorf(context.Context, string, ...any) {}

// startFleet connects n agents to url, 100 handshakes at a time, and waits
// until each has had its first answer (the server processed its first
// report). With spread 0 they connect as fast as the server takes them (a
// connect storm); otherwise agent i starts i × spread / n after the first,
// so that their heartbeats, which keep the phase of their connection, come
// evenly over the interval as in a fleet whose agents did not all connect in
// the same seconds.
func startFleet(ctx context.Context, url string, n int, heartbeat, spread time.Duration) (*fleet, time.Duration, error) {
	f := &fleet{got: map[int]time.Time{}}
	f.first.Add(n)
	begin := time.Now()
	sem := make(chan struct{}, 100)
	for i := range n {
		if spread > 0 {
			time.Sleep(time.Until(begin.Add(spread * time.Duration(i) / time.Duration(n))))
		}
		sem <- struct{}{}
		c, id, err := f.startOne(ctx, i, url, heartbeat)
		<-sem
		if err != nil {
			return f, 0, fmt.Errorf("agent %d: %w", i, err)
		}
		f.clients, f.ids = append(f.clients, c), append(f.ids, id)
	}
	done := make(chan struct{})
	go func() { f.first.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return f, 0, fmt.Errorf("%d of %d agents answered: %w", f.answered.Load(), n, ctx.Err())
	}
	return f, time.Since(begin), nil
}

func (f *fleet) startOne(ctx context.Context, i int, url string, heartbeat time.Duration) (client.OpAMPClient, string, error) {
	var uid types.InstanceUid
	_, _ = rand.Read(uid[:])
	h := hex.EncodeToString(uid[:])
	id := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	c := client.NewWebSocket(nopLogger{})
	str := func(k, v string) *protobufs.KeyValue {
		return &protobufs.KeyValue{Key: k, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: v}}}
	}
	if err := c.SetAgentDescription(&protobufs.AgentDescription{
		IdentifyingAttributes:    []*protobufs.KeyValue{str("service.name", "otelcol-contrib"), str("service.version", "0.160.0"), str("service.instance.id", id)},
		NonIdentifyingAttributes: []*protobufs.KeyValue{str("host.name", fmt.Sprintf("load-%05d", i)), str("os.type", "linux")},
	}); err != nil {
		return nil, "", err
	}
	if err := c.SetHealth(&protobufs.ComponentHealth{Healthy: true, Status: "StatusOK", StartTimeUnixNano: uint64(time.Now().UnixNano())}); err != nil {
		return nil, "", err
	}
	caps := protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsRemoteConfig | protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat
	if err := c.SetCapabilities(&caps); err != nil {
		return nil, "", err
	}
	var once sync.Once
	err := c.Start(ctx, types.StartSettings{
		OpAMPServerURL: url, Header: http.Header{"Authorization": {"Bearer " + agentToken}},
		InstanceUid: uid, HeartbeatInterval: &heartbeat,
		Callbacks: types.Callbacks{
			OnMessage: func(_ context.Context, m *types.MessageData) {
				once.Do(func() { f.answered.Add(1); f.first.Done() })
				if m.RemoteConfig != nil {
					f.configured(i, c, m.RemoteConfig)
				}
			},
		},
	})
	return c, id, err
}

// configured notes a configuration's arrival and reports it applied.
func (f *fleet) configured(i int, c client.OpAMPClient, rc *protobufs.AgentRemoteConfig) {
	hash := hex.EncodeToString(rc.GetConfigHash())
	f.mu.Lock()
	if hash == f.wantHash {
		if _, dup := f.got[i]; !dup {
			f.got[i] = time.Now()
			if len(f.got) == cap(f.gotAll) && f.gotAll != nil {
				close(f.gotAll)
				f.gotAll = nil
			}
		}
	}
	f.mu.Unlock()
	go func() {
		_ = c.SetRemoteConfigStatus(&protobufs.RemoteConfigStatus{LastRemoteConfigHash: rc.GetConfigHash(),
			Status: protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED})
	}()
}

// expect arms the count of arrivals of hash among n agents; the channel
// closes when all n have it.
func (f *fleet) expect(hash string, n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wantHash, f.got, f.gotAll = hash, map[int]time.Time{}, make(chan struct{}, n)
	return f.gotAll
}

func (f *fleet) arrivals() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Time, 0, len(f.got))
	for _, t := range f.got {
		out = append(out, t)
	}
	return out
}

// stop closes the clients, 200 at a time.
func (f *fleet) stop() {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 200)
	for _, c := range f.clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = c.Stop(ctx)
			cancel()
			<-sem
		}()
	}
	wg.Wait()
}
