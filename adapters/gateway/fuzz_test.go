package gateway

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"unicode/utf8"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
)

// fullReport is a report with every part the gateway reads: the seed of the
// fuzz test and the input of the benchmark.
func fullReport() *protobufs.AgentToServer {
	return msg(
		withDesc(desc([]*protobufs.KeyValue{str("service.name", "otelcol"), str("service.version", "v0.110.0")},
			str("host.name", "host-1"), str("site.timezone", "Europe/Berlin"), kvlist("labels", str("env", "prod"), str("team", "obs")))),
		withHealth(hl(true, "StatusOK", "", 1, map[string]*protobufs.ComponentHealth{
			"pipeline:traces": {Healthy: true, Status: "StatusOK", ComponentHealthMap: map[string]*protobufs.ComponentHealth{
				"receiver:otlp": {Healthy: true, Status: "StatusOK"}, "exporter:otlp": {Healthy: true, Status: "StatusOK"}}},
			UpdateComponent: {Status: "downloading", StartTimeUnixNano: ns(20), ComponentHealthMap: map[string]*protobufs.ComponentHealth{
				"version": {Status: "v0.111.0"}, "from": {Status: "v0.110.0"},
				"step:offered": step("done", 20, 21, ""), "step:downloading": step("running", 21, 25, "")}},
		})),
		withRemoteConfig(hashA, applied, ""),
		withPackage("", &protobufs.PackageStatus{AgentHasVersion: "0.110.0", ServerOfferedVersion: "0.111.0",
			Status: protobufs.PackageStatusEnum_PackageStatusEnum_Downloading, DownloadDetails: &protobufs.PackageDownloadDetails{DownloadPercent: 40}}),
	)
}

// FuzzTranslate feeds arbitrary bytes that decode as an AgentToServer to
// Translate: it must not panic, must keep what it stores valid and bounded,
// and must be idempotent (the same report again changes no fact, or every
// repeated report would be written).
func FuzzTranslate(f *testing.F) {
	for _, m := range []*protobufs.AgentToServer{fullReport(), msg(), msg(withVersion("1.0")), {InstanceUid: []byte{1}}} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	prev := agent.Agent{ID: id1, ServiceVersion: "0.109.0", VersionSince: at(-10)}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m protobufs.AgentToServer
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		m.InstanceUid = uid1 // reach past the uid check most of the time
		next, err := Translate(prev, &m, at(0), "")
		if err != nil {
			return
		}
		checkStorable(t, next)
		again, err := Translate(next, &m, at(5), "")
		if err != nil || !sameFacts(next, again) {
			t.Fatalf("not idempotent: %v\nfirst  %+v\nsecond %+v", err, next, again)
		}
	})
}

func checkStorable(t *testing.T, a agent.Agent) {
	t.Helper()
	if len(a.Attributes) > maxAttributes {
		t.Fatalf("%d attributes", len(a.Attributes))
	}
	strs := []string{a.ServiceVersion, a.Health.Status, a.Health.LastError, a.RemoteConfig.Error, a.Package.Version, a.Package.Error}
	for k, v := range a.Attributes {
		strs = append(strs, k, v)
	}
	if a.Update != nil {
		if len(a.Update.Steps) > maxSteps {
			t.Fatalf("%d steps", len(a.Update.Steps))
		}
		strs = append(strs, a.Update.Status, a.Update.Version, a.Update.From)
		for k, s := range a.Update.Steps {
			strs = append(strs, k, s.Status, s.LastError)
		}
	}
	for _, s := range strs {
		if !utf8.ValidString(s) || len(s) > maxErrorBytes {
			t.Fatalf("unstorable string %q", s)
		}
	}
	if a.Package.DownloadPercent < 0 || a.Package.DownloadPercent > 100 {
		t.Fatalf("download percent %d", a.Package.DownloadPercent)
	}
}

// BenchmarkTranslate measures one full report (description, health tree with
// the update component, remote config and package status) and one heartbeat.
func BenchmarkTranslate(b *testing.B) {
	for _, bc := range []struct {
		name string
		m    *protobufs.AgentToServer
	}{{name: "full report", m: fullReport()}, {name: "heartbeat", m: msg()}} {
		b.Run(bc.name, func(b *testing.B) {
			prev := agent.Agent{ID: id1}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Translate(prev, bc.m, at(0), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHeartbeat measures what the gateway does with the heartbeat of
// an agent it holds: the message handled on a handler goroutine, the
// session found, nothing written, the answer built.
func BenchmarkHeartbeat(b *testing.B) {
	clk := &clock{now: t0}
	g, err := New(Config{Now: clk.Now, Tokens: []string{"t"}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}, newMemAgents(), memConfigs{})
	if err != nil {
		b.Fatal(err)
	}
	l := &link{g: g}
	ctx := context.Background()
	first := fullReport()
	first.Capabilities = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus)
	if resp := l.message(ctx, nil, first); resp.GetErrorResponse() != nil {
		b.Fatal(resp.GetErrorResponse())
	}
	beat := msg(func(m *protobufs.AgentToServer) { m.SequenceNum, m.Capabilities = 2, first.Capabilities })
	b.ReportAllocs()
	for b.Loop() {
		if resp := l.message(ctx, nil, beat); resp.GetErrorResponse() != nil {
			b.Fatal(resp.GetErrorResponse())
		}
	}
}
