package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

var (
	hashA   = []byte{0xab, 0xcd, 0x01}
	applied = protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED
)

func TestTranslate(t *testing.T) {
	upd := hl(true, "StatusOK", "", 10, map[string]*protobufs.ComponentHealth{
		UpdateComponent: {Status: "downloading", StartTimeUnixNano: ns(20), ComponentHealthMap: map[string]*protobufs.ComponentHealth{
			"version":          {Status: "v0.111.0"},
			"from":             {Status: "v0.110.0"},
			"step:offered":     step("done", 20, 21, ""),
			"step:downloading": step("running", 21, 25, ""),
			"other":            {Status: "ignored"},
		}},
	})
	nested := hl(true, "StatusOK", "", 10, map[string]*protobufs.ComponentHealth{
		"host": {ComponentHealthMap: map[string]*protobufs.ComponentHealth{UpdateComponent: {Status: "installing"}}},
	})
	seen := agent.Agent{ID: id1, ServiceVersion: "0.110.0", VersionSince: at(-100), Fleet: "edge", DesiredHash: "abcd", PackageOffer: "0.111.0",
		Health:       agent.Health{Healthy: true, Status: "StatusOK", StartTime: at(-200), ReportedAt: at(-100)},
		RemoteConfig: agent.RemoteConfigStatus{Hash: "abcd01", Status: agent.ConfigApplied, Since: at(-50)}}
	tests := []struct {
		name string
		prev agent.Agent
		in   *protobufs.AgentToServer
		want agent.Agent
	}{
		{name: "heartbeat keeps everything", prev: seen, in: msg(), want: seen}, // no field = unchanged
		{name: "first description", prev: agent.Agent{}, in: msg(withVersion("v0.110.0")), want: agent.Agent{ID: id1, ServiceVersion: "0.110.0", VersionSince: at(0),
			Attributes: map[string]string{"service.name": "otelcol", "service.version": "0.110.0"}}}, // leading v dropped, dated now
		{name: "same version keeps its date", prev: seen, in: msg(withVersion("0.110.0")), want: with(seen, func(a *agent.Agent) {
			a.Attributes = map[string]string{"service.name": "otelcol", "service.version": "0.110.0"}
		})}, // VersionSince stays at -100
		{name: "new version is dated now", prev: seen, in: msg(withVersion("v0.111.0")), want: with(seen, func(a *agent.Agent) {
			a.Attributes = map[string]string{"service.name": "otelcol", "service.version": "0.111.0"}
			a.ServiceVersion, a.VersionSince = "0.111.0", at(0)
		})},
		{name: "description without version clears it", prev: seen, in: msg(withDesc(desc(nil, str("host.name", "h1")))), want: with(seen, func(a *agent.Agent) {
			a.Attributes, a.ServiceVersion, a.VersionSince = map[string]string{"host.name": "h1"}, "", time.Time{}
		})},
		{name: "health first report", prev: agent.Agent{ID: id1}, in: msg(withHealth(hl(false, "", "", 5, nil))), want: agent.Agent{ID: id1,
			Health: agent.Health{StartTime: at(5), ReportedAt: at(0)}}}, // equal to the zero health, still dated
		{name: "same health keeps ReportedAt", prev: seen, in: msg(withHealth(hl(true, "StatusOK", "", -200, nil))), want: seen},
		{name: "changed health is dated now", prev: seen, in: msg(withHealth(hl(false, "StatusRecoverableError", "exporter failed", -200, nil))), want: with(seen, func(a *agent.Agent) {
			a.Health = agent.Health{Status: "StatusRecoverableError", LastError: "exporter failed", StartTime: at(-200), ReportedAt: at(0)}
		})},
		{name: "update component", prev: agent.Agent{ID: id1}, in: msg(withHealth(upd)), want: agent.Agent{ID: id1,
			Health: agent.Health{Healthy: true, Status: "StatusOK", StartTime: at(10), ReportedAt: at(0)},
			Update: &agent.UpdateComponent{Status: "downloading", Version: "v0.111.0", From: "v0.110.0", StartedAt: at(20), Steps: map[string]agent.UpdateStep{
				"step:offered":     {Status: "done", StartedAt: at(20), StatusTime: at(21)},
				"step:downloading": {Status: "running", StartedAt: at(21), StatusTime: at(25)},
			}}}}, // children other than version, from and step:* are ignored
		{name: "update component found below the top", prev: agent.Agent{ID: id1}, in: msg(withHealth(nested)), want: agent.Agent{ID: id1,
			Health: agent.Health{Healthy: true, Status: "StatusOK", StartTime: at(10), ReportedAt: at(0)},
			Update: &agent.UpdateComponent{Status: "installing"}}},
		{name: "health without update component clears it", prev: with(seen, func(a *agent.Agent) { a.Update = &agent.UpdateComponent{Status: "done"} }),
			in: msg(withHealth(hl(true, "StatusOK", "", -200, nil))), want: seen}, // the updater's attempt is over
		{name: "config applied", prev: agent.Agent{ID: id1}, in: msg(withRemoteConfig(hashA, applied, "")), want: agent.Agent{ID: id1,
			RemoteConfig: agent.RemoteConfigStatus{Hash: "abcd01", Status: agent.ConfigApplied, Since: at(0)}}}, // hash in hex
		{name: "same config status keeps Since", prev: seen, in: msg(withRemoteConfig(hashA, applied, "")), want: seen},
		{name: "config failed", prev: seen, in: msg(withRemoteConfig(hashA, protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED, "bad yaml")), want: with(seen, func(a *agent.Agent) {
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "abcd01", Status: agent.ConfigFailed, Error: "bad yaml", Since: at(0)}
		})},
		{name: "config applying", prev: agent.Agent{ID: id1}, in: msg(withRemoteConfig(hashA, protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING, "")), want: agent.Agent{ID: id1,
			RemoteConfig: agent.RemoteConfigStatus{Hash: "abcd01", Status: agent.ConfigApplying, Since: at(0)}}},
		{name: "config unset", prev: agent.Agent{ID: id1}, in: msg(withRemoteConfig(nil, protobufs.RemoteConfigStatuses_RemoteConfigStatuses_UNSET, "")), want: agent.Agent{ID: id1,
			RemoteConfig: agent.RemoteConfigStatus{Since: at(0)}}}, // nothing applied yet
		{name: "package installed", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{AgentHasVersion: "v0.110.0", ServerOfferedVersion: "v0.110.0"})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.110.0", Status: agent.PackageInstalled, Since: at(0)}}},
		{name: "package downloading", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{AgentHasVersion: "0.110.0", ServerOfferedVersion: "0.111.0",
			Status: protobufs.PackageStatusEnum_PackageStatusEnum_Downloading, DownloadDetails: &protobufs.PackageDownloadDetails{DownloadPercent: 42.6}})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading, DownloadPercent: 43, Since: at(0)}}}, // the offered version, percent rounded
		{name: "package install pending", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{ServerOfferedVersion: "0.111.0", Status: protobufs.PackageStatusEnum_PackageStatusEnum_InstallPending})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallPending, Since: at(0)}}},
		{name: "package installing", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{ServerOfferedVersion: "0.111.0", Status: protobufs.PackageStatusEnum_PackageStatusEnum_Installing})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstalling, Since: at(0)}}},
		{name: "package install failed", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{AgentHasVersion: "0.110.0", ServerOfferedVersion: "0.111.0",
			Status: protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed, ErrorMessage: "checksum mismatch"})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageInstallFailed, Error: "checksum mismatch", Since: at(0)}}},
		{name: "other package only", prev: with(seen, func(a *agent.Agent) {
			a.Package = agent.PackageStatus{Version: "0.110.0", Status: agent.PackageInstalled}
		}),
			in: msg(withPackage("addon", &protobufs.PackageStatus{AgentHasVersion: "1.0"})), want: seen}, // the collector package is absent: zero status
		{name: "percent clamped", prev: agent.Agent{ID: id1}, in: msg(withPackage("", &protobufs.PackageStatus{ServerOfferedVersion: "0.111.0", Status: protobufs.PackageStatusEnum_PackageStatusEnum_Downloading,
			DownloadDetails: &protobufs.PackageDownloadDetails{DownloadPercent: 250}})), want: agent.Agent{ID: id1,
			Package: agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading, DownloadPercent: 100, Since: at(0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Translate(tt.prev, tt.in, at(0), "")
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Translate\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func with(a agent.Agent, change func(*agent.Agent)) agent.Agent {
	change(&a)
	return a
}

func TestTranslate_Attributes(t *testing.T) {
	d := desc(
		[]*protobufs.KeyValue{str("service.name", "otelcol"), str("service.version", "v0.110.0"), str("host.name", "id-wins")},
		str("host.name", "non-id"), str("site.timezone", "Europe/Berlin"), str("labels.team", "obs"),
		kvlist("labels", str("env", "prod"), kvlist("tier", str("name", "edge"))),
		&protobufs.KeyValue{Key: "cpus", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_IntValue{IntValue: 8}}},
		&protobufs.KeyValue{Key: "arm", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_BoolValue{BoolValue: true}}},
		&protobufs.KeyValue{Key: "load", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_DoubleValue{DoubleValue: 0.5}}},
		&protobufs.KeyValue{Key: "ips", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_ArrayValue{ArrayValue: &protobufs.ArrayValue{}}}},
		&protobufs.KeyValue{Key: "raw", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_BytesValue{BytesValue: []byte{1}}}},
		&protobufs.KeyValue{Key: "", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: "no key"}}},
	)
	want := map[string]string{
		"service.name": "otelcol", "service.version": "0.110.0", "host.name": "id-wins", // identifying wins
		"site.timezone": "Europe/Berlin", "labels.team": "obs", "labels.env": "prod", "labels.tier.name": "edge", // both label forms read labels.<k>
		"cpus": "8", "arm": "true", "load": "0.5", // scalars as strings; arrays, bytes and empty keys skipped
	}
	if got := Attributes(d); !reflect.DeepEqual(got, want) {
		t.Errorf("Attributes\n got %v\nwant %v", got, want)
	}
}

func TestTranslate_Bounds(t *testing.T) {
	long := strings.Repeat("é", maxValueBytes) // 2 bytes a rune: cut on a rune boundary
	var many []*protobufs.KeyValue
	for i := range maxAttributes + 10 {
		many = append(many, str(strings.Repeat("k", 1+i%50)+string(rune('a'+i%26))+strings.Repeat("x", i/26), "v"))
	}
	got, err := Translate(agent.Agent{}, msg(
		withDesc(desc([]*protobufs.KeyValue{str("bad", "a\xffb"), str("long", long), str(strings.Repeat("k", maxKeyBytes+1), "v")}, many...)),
		withHealth(hl(false, "", strings.Repeat("e", 3*maxErrorBytes), 0, nil)),
	), at(0), "")
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Attributes["bad"]; v != "a\uFFFDb" {
		t.Errorf("invalid UTF-8 = %q, want it replaced", v)
	}
	if v := got.Attributes["long"]; len(v) > maxValueBytes || len(v) != maxValueBytes || !strings.HasPrefix(long, v) {
		t.Errorf("long value has %d bytes, want %d on a rune boundary", len(v), maxValueBytes)
	}
	if n := len(got.Attributes); n != maxAttributes {
		t.Errorf("%d attributes kept, want %d", n, maxAttributes)
	}
	if n := len(got.Health.LastError); n != maxErrorBytes {
		t.Errorf("lastError has %d bytes, want %d", n, maxErrorBytes)
	}
}

func TestTranslate_Malformed(t *testing.T) {
	tests := []struct {
		name string
		prev agent.Agent
		uid  []byte
	}{
		{name: "no uid", prev: agent.Agent{}, uid: nil},                                                 // an agent without identity
		{name: "short uid", prev: agent.Agent{}, uid: []byte("01ARZ3NDEKTSV4R")},                        // a 15-byte (old ULID-style) uid
		{name: "other agent", prev: agent.Agent{ID: "00000000-0000-0000-0000-000000000000"}, uid: uid1}, // uid changed on a connection
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := msg(withVersion("0.1.0"))
			m.InstanceUid = tt.uid
			got, err := Translate(tt.prev, m, at(0), "")
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error = %v, want ErrMalformed", err)
			}
			if !reflect.DeepEqual(got, tt.prev) {
				t.Errorf("view changed to %+v", got)
			}
		})
	}
}

// The collector's supervisor starts a new version in three reports:
// unhealthy without status, StatusStarting, then StatusOK. The first two are
// start-up reports that neither fail nor succeed a target.
func TestTranslate_SupervisorStartup(t *testing.T) {
	prev := agent.Agent{ID: id1, ServiceVersion: "0.110.0", VersionSince: at(-600),
		Health: agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: at(-600), ReportedAt: at(-600)}}
	steps := []struct {
		in          *protobufs.AgentToServer
		sec         int
		wantHealth  agent.Health
		wantStartup bool
	}{
		{in: msg(withVersion("v0.111.0"), withHealth(hl(false, "", "", 0, nil))), sec: 1, wantHealth: agent.Health{ReportedAt: at(1)}, wantStartup: true},                                          // supervisor: new version, healthy=false, no status
		{in: msg(withHealth(hl(false, agent.StatusStarting, "", 2, nil))), sec: 3, wantHealth: agent.Health{Status: agent.StatusStarting, StartTime: at(2), ReportedAt: at(3)}, wantStartup: true}, // collector starting
		{in: msg(withHealth(hl(true, agent.StatusOK, "", 2, nil))), sec: 5, wantHealth: agent.Health{Healthy: true, Status: agent.StatusOK, StartTime: at(2), ReportedAt: at(5)}, wantStartup: false},
	}
	for i, s := range steps {
		next, err := Translate(prev, s.in, at(s.sec), "")
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if next.Health != s.wantHealth || next.Health.StartupReport() != s.wantStartup {
			t.Errorf("report %d: health %+v (start-up %v), want %+v (start-up %v)", i, next.Health, next.Health.StartupReport(), s.wantHealth, s.wantStartup)
		}
		if next.ServiceVersion != "0.111.0" || !next.VersionSince.Equal(at(1)) {
			t.Errorf("report %d: version %q since %v, want 0.111.0 since the first report", i, next.ServiceVersion, next.VersionSince)
		}
		prev = next
	}
}

func TestPercent(t *testing.T) {
	tests := []struct {
		in   float64
		want int
	}{
		{in: 0, want: 0}, {in: -3, want: 0}, {in: math.NaN(), want: 0}, // nothing or nonsense
		{in: 49.5, want: 50}, {in: 99.4, want: 99}, {in: 100, want: 100}, {in: 1e9, want: 100}, // rounded, clamped
	}
	for _, tt := range tests {
		if got := percent(tt.in); got != tt.want {
			t.Errorf("percent(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeVersion(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "v0.110.0", want: "0.110.0"}, {in: "V1.2.3", want: "1.2.3"}, {in: " 0.110.0 ", want: "0.110.0"}, // leading v before a digit dropped
		{in: "latest", want: "latest"}, {in: "v", want: "v"}, {in: "vnext", want: "vnext"}, {in: "", want: ""}, // anything else stays
	}
	for _, tt := range tests {
		if got := NormalizeVersion(tt.in); got != tt.want {
			t.Errorf("NormalizeVersion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Package statuses carry the moment they were first reported, so that the
// engine can tell an INSTALL_FAILED of an earlier attempt from a new one.
func TestTranslate_PackageSince(t *testing.T) {
	failed := func() *protobufs.AgentToServer {
		return msg(withPackage("", &protobufs.PackageStatus{ServerOfferedVersion: "0.111.0", Status: protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed}))
	}
	first, err := Translate(agent.Agent{ID: id1}, failed(), at(0), "")
	if err != nil || !first.Package.Since.Equal(at(0)) {
		t.Fatalf("first report: %v %+v", err, first.Package)
	}
	again, _ := Translate(first, failed(), at(30), "")
	if !again.Package.Since.Equal(at(0)) {
		t.Fatalf("a repeated report moved Since to %s", again.Package.Since)
	}
	next, _ := Translate(again, msg(withPackage("", &protobufs.PackageStatus{ServerOfferedVersion: "0.111.0",
		Status: protobufs.PackageStatusEnum_PackageStatusEnum_Downloading})), at(60), "")
	if !next.Package.Since.Equal(at(60)) {
		t.Fatalf("a new status must be dated now, got %s", next.Package.Since)
	}
}

// TestTranslate_ComponentSummary: the leaves of the tree below the process
// are its components; the unhealthy ones are named by path, sorted and
// bounded; the updater's component is none of them.
func TestTranslate_ComponentSummary(t *testing.T) {
	ok := func() *protobufs.ComponentHealth {
		return &protobufs.ComponentHealth{Healthy: true, Status: "StatusOK"}
	}
	bad := func() *protobufs.ComponentHealth {
		return &protobufs.ComponentHealth{Status: "StatusRecoverableError", LastError: "connection refused"}
	}
	group := func(children map[string]*protobufs.ComponentHealth) *protobufs.ComponentHealth {
		return &protobufs.ComponentHealth{Healthy: true, ComponentHealthMap: children}
	}
	deep := ok()
	for i := range maxNestingDepth + 2 { // a chain deeper than the bound
		deep = group(map[string]*protobufs.ComponentHealth{fmt.Sprintf("g%d", i): deep})
	}
	many := map[string]*protobufs.ComponentHealth{}
	for i := range agent.MaxUnhealthyNames + 8 {
		many[fmt.Sprintf("exporter:e%02d", i)] = bad()
	}
	var first []string
	for i := range agent.MaxUnhealthyNames {
		first = append(first, fmt.Sprintf("pipeline:logs/exporter:e%02d", i))
	}
	tests := []struct {
		name     string
		children map[string]*protobufs.ComponentHealth
		want     *agent.ComponentSummary
	}{
		{name: "no tree", children: nil, want: nil},
		{name: "a collector's pipelines", children: map[string]*protobufs.ComponentHealth{
			"pipeline:traces": group(map[string]*protobufs.ComponentHealth{"receiver:otlp": ok(), "exporter:otlp": bad()}),
			"pipeline:metrics": group(map[string]*protobufs.ComponentHealth{
				"receiver:hostmetrics": ok(), "processor:batch": ok(), "exporter:prometheus": bad()}),
			"extensions": group(map[string]*protobufs.ComponentHealth{"extension:health_check": ok()}),
		}, want: &agent.ComponentSummary{Total: 6, UnhealthyCount: 2,
			Unhealthy: []string{"pipeline:metrics/exporter:prometheus", "pipeline:traces/exporter:otlp"}}},
		{name: "all healthy", children: map[string]*protobufs.ComponentHealth{"receiver:otlp": ok()}, want: &agent.ComponentSummary{Total: 1}},
		{name: "only the updater", children: map[string]*protobufs.ComponentHealth{
			UpdateComponent: {Status: "failed", ComponentHealthMap: map[string]*protobufs.ComponentHealth{"step:install": bad()}},
		}, want: nil}, // no part of the collector
		{name: "the updater below a group", children: map[string]*protobufs.ComponentHealth{
			"host": group(map[string]*protobufs.ComponentHealth{UpdateComponent: bad(), "receiver:otlp": ok()}),
		}, want: &agent.ComponentSummary{Total: 1}},
		{name: "deeper than the bound", children: map[string]*protobufs.ComponentHealth{"root": deep},
			want: &agent.ComponentSummary{Total: 1}}, // the node at the bound is a leaf, healthy as it reports
		{name: "more unhealthy than named", children: map[string]*protobufs.ComponentHealth{"pipeline:logs": group(many)},
			want: &agent.ComponentSummary{Total: agent.MaxUnhealthyNames + 8, UnhealthyCount: agent.MaxUnhealthyNames + 8, Unhealthy: first}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Translate(agent.Agent{ID: id1}, msg(withHealth(hl(true, "StatusOK", "", 10, tt.children))), at(0), "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Health.Components, tt.want) {
				t.Errorf("components\n got %+v\nwant %+v", got.Health.Components, tt.want)
			}
			// The same report again is no new fact: the gateway writes nothing.
			again, _ := Translate(got, msg(withHealth(hl(true, "StatusOK", "", 10, tt.children))), at(30), "")
			if !sameFacts(got, again) {
				t.Errorf("a repeated report changed the facts: %+v, then %+v", got.Health, again.Health)
			}
		})
	}
}

// A component that turns unhealthy is a new fact, but it does not date the
// process's report: the engine's ReportedAt stays.
func TestTranslate_ComponentChangeIsAFactNotANewReport(t *testing.T) {
	tree := func(exporterHealthy bool) *protobufs.ComponentHealth {
		return hl(true, "StatusOK", "", 10, map[string]*protobufs.ComponentHealth{
			"pipeline:traces": {Healthy: true, ComponentHealthMap: map[string]*protobufs.ComponentHealth{
				"exporter:otlp": {Healthy: exporterHealthy}}},
		})
	}
	before, _ := Translate(agent.Agent{ID: id1}, msg(withHealth(tree(true))), at(0), "")
	after, _ := Translate(before, msg(withHealth(tree(false))), at(30), "")
	if sameFacts(before, after) {
		t.Fatal("an exporter that failed is no change")
	}
	if !after.Health.ReportedAt.Equal(before.Health.ReportedAt) {
		t.Errorf("ReportedAt moved from %v to %v", before.Health.ReportedAt, after.Health.ReportedAt)
	}
	if c := after.Health.Components; c == nil || c.UnhealthyCount != 1 || c.Unhealthy[0] != "pipeline:traces/exporter:otlp" {
		t.Errorf("components %+v", c)
	}
}

func TestTranslate_Capabilities(t *testing.T) {
	if agent.CapabilityReportsHealth != uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth) {
		t.Fatalf("agent.CapabilityReportsHealth %#x, want OpAMP's ReportsHealth %#x", agent.CapabilityReportsHealth, protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth)
	}
	noHealth := uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig)
	steps := []struct {
		caps              uint64 // 0: not sent
		want              uint64
		wantReportsHealth bool
	}{
		{caps: 0, want: 0, wantReportsHealth: true},                // unknown: judged as reporting health
		{caps: noHealth, want: noHealth, wantReportsHealth: false}, // the opamp-go example agent
		{caps: 0, want: noHealth, wantReportsHealth: false},        // a message without capabilities keeps them
		{caps: noHealth | agent.CapabilityReportsHealth, want: noHealth | agent.CapabilityReportsHealth, wantReportsHealth: true},
	}
	prev := agent.Agent{ID: id1}
	for i, s := range steps {
		m := msg()
		m.Capabilities = s.caps
		next, err := Translate(prev, m, at(i), "")
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if next.Capabilities != s.want || next.ReportsHealth() != s.wantReportsHealth {
			t.Errorf("report %d: capabilities %#x (reports health %v), want %#x (%v)", i, next.Capabilities, next.ReportsHealth(), s.want, s.wantReportsHealth)
		}
		prev = next
	}
}

func TestEffectiveConfigHash(t *testing.T) {
	sum := func(s string) string {
		b := sha256.Sum256([]byte(s))
		return hex.EncodeToString(b[:])
	}
	two := map[string]string{"base.yaml": "a: 1", "extra.yaml": "b: 2"}
	cases := []struct {
		name  string
		files map[string]string // nil: no map
		want  string            // "": none; "!" + other case: differs from it
	}{
		{name: "no map", files: nil, want: ""},
		{name: "no file", files: map[string]string{}, want: ""},
		{name: "one file: hashes like a rendered configuration", files: map[string]string{"": "a: 1"}, want: sum("a: 1")},
		{name: "one named file: the name does not count", files: map[string]string{"collector.yaml": "a: 1"}, want: sum("a: 1")},
	}
	for _, c := range cases {
		var m *protobufs.AgentConfigMap
		if c.files != nil {
			m = msg(withEffective(c.files)).EffectiveConfig.ConfigMap
		}
		if got := EffectiveConfigHash(m); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	h := EffectiveConfigHash(msg(withEffective(two)).EffectiveConfig.ConfigMap)
	for range 20 { // map order varies from run to run
		if again := EffectiveConfigHash(msg(withEffective(two)).EffectiveConfig.ConfigMap); again != h {
			t.Fatalf("two files hash %q, then %q", h, again)
		}
	}
	for _, other := range []map[string]string{
		{"base.yaml": "a: 1", "extra.yaml": "b: 3"}, // a body changed
		{"base.yaml": "a: 1", "other.yaml": "b: 2"}, // a name changed
		{"base.yaml": "a: 1extra.yaml", "": "b: 2"}, // the same bytes cut elsewhere
		{"base.yaml": "a: 1"},                       // a file less
	} {
		if got := EffectiveConfigHash(msg(withEffective(other)).EffectiveConfig.ConfigMap); got == h || got == "" {
			t.Errorf("%v hashes %q, like %v", other, got, two)
		}
	}
}

func TestTranslate_EffectiveConfig(t *testing.T) {
	first, _ := Translate(agent.Agent{ID: id1}, msg(withEffective(map[string]string{"": "a: 1"})), at(0), "")
	if first.EffectiveHash == "" {
		t.Fatal("no effective hash recorded")
	}
	kept, _ := Translate(first, msg(), at(30), "")
	if kept.EffectiveHash != first.EffectiveHash || !sameFacts(first, kept) {
		t.Errorf("a message without effective_config changed it: %q → %q", first.EffectiveHash, kept.EffectiveHash)
	}
	again, _ := Translate(kept, msg(withEffective(map[string]string{"": "a: 1"})), at(60), "")
	if !sameFacts(kept, again) {
		t.Error("the same effective configuration reported again is a change")
	}
	changed, _ := Translate(again, msg(withEffective(map[string]string{"": "a: 2"})), at(90), "")
	if sameFacts(again, changed) || changed.EffectiveHash == again.EffectiveHash {
		t.Error("a new effective configuration is no change")
	}
}
