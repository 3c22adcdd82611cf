package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"

	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/adapters/store"
)

// The server processes: the load program runs itself again with -role
// gateway or -role baseline, so that RSS and CPU of /proc/<pid> are the
// server's alone. Each prints one line "ready <opamp addr> <debug addr>" on
// stdout and serves until SIGTERM. The debug address (loopback) serves
// /debug/pprof/, /debug/usage (the store's Usage as JSON) and /debug/gc.

// serveRole runs one server process.
func serveRole(role, tablePrefix string, heartbeat, pollInterval time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var (
		handler     http.Handler
		connContext func(context.Context, net.Conn) context.Context
		usage       = func() store.Usage { return store.Usage{} }
		run         = func(context.Context) {}
	)
	switch role {
	case "gateway":
		st, err := openStore(ctx, tablePrefix)
		if err != nil {
			return err
		}
		log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		g, err := gateway.New(gateway.Config{Now: func() time.Time { return time.Now().UTC() }, Logger: log,
			Tokens: []string{agentToken}, Heartbeat: heartbeat, PollInterval: pollInterval}, st, st)
		if err != nil {
			return err
		}
		if handler, connContext, err = g.Attach(); err != nil {
			return err
		}
		usage, run = st.Usage, g.Run
	case "baseline":
		var err error
		if handler, connContext, err = baseline(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/opamp", handler)
	srv := &http.Server{Handler: mux, ConnContext: connContext, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	dbg, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	go func() { _ = http.Serve(dbg, debugMux(usage)) }()
	go run(ctx)
	fmt.Printf("ready %s %s\n", ln.Addr(), dbg.Addr())
	<-ctx.Done()
	return nil
}

func openStore(ctx context.Context, prefix string) (*store.Store, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	// DynamoDB Local omits x-amz-crc32 on error responses (aws-sdk-go-v2 #3545).
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = true
		// As opamp-gateway's withIdleConns.
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = 2 * gateway.DefaultStoreConcurrency
		})
	})
	return store.New(client, store.TablesWithPrefix(prefix)), nil
}

func debugMux(usage func() store.Usage) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/usage", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(usage())
	})
	mux.HandleFunc("/debug/gc", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(map[string]uint64{"HeapInuse": ms.HeapInuse, "StackInuse": ms.StackInuse,
			"Goroutines": uint64(runtime.NumGoroutine())})
	})
	return mux
}

// baseline is what opamp-go's example server (internal/examples/server,
// a nested module the Go module proxy does not serve) does with a
// connection, written on opamp-go's own server package: accept every
// agent, keep each agent's last AgentToServer in a map, answer with its
// instance uid.
func baseline() (http.Handler, func(context.Context, net.Conn) context.Context, error) {
	var mu sync.Mutex
	last := map[string]*protobufs.AgentToServer{}
	srv := server.New(nil)
	onMessage := func(_ context.Context, _ types.Connection, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
		mu.Lock()
		last[string(msg.GetInstanceUid())] = msg
		mu.Unlock()
		return &protobufs.ServerToAgent{InstanceUid: msg.GetInstanceUid()}
	}
	h, cc, err := srv.Attach(server.Settings{Callbacks: types.Callbacks{
		OnConnecting: func(*http.Request) types.ConnectionResponse {
			return types.ConnectionResponse{Accept: true, ConnectionCallbacks: types.ConnectionCallbacks{OnMessage: onMessage}}
		},
	}})
	return http.HandlerFunc(h), cc, err
}
