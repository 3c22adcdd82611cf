package gateway

import (
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// t0 is the fake clock's origin; at(s) is s seconds later.
var t0 = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func ns(s int) uint64 { return uint64(at(s).UnixNano()) }

var uid1 = []byte{0x01, 0x8f, 0x3a, 0x10, 0x22, 0x33, 0x74, 0x44, 0x85, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88}

const id1 = "018f3a10-2233-7444-8555-666677778888"

func str(k, v string) *protobufs.KeyValue {
	return &protobufs.KeyValue{Key: k, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: v}}}
}

func kvlist(k string, kvs ...*protobufs.KeyValue) *protobufs.KeyValue {
	return &protobufs.KeyValue{Key: k, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_KvlistValue{
		KvlistValue: &protobufs.KeyValueList{Values: kvs}}}}
}

func desc(identifying []*protobufs.KeyValue, nonIdentifying ...*protobufs.KeyValue) *protobufs.AgentDescription {
	return &protobufs.AgentDescription{IdentifyingAttributes: identifying, NonIdentifyingAttributes: nonIdentifying}
}

// msg is an AgentToServer of agent 1 with the given parts set.
func msg(parts ...func(*protobufs.AgentToServer)) *protobufs.AgentToServer {
	m := &protobufs.AgentToServer{InstanceUid: uid1}
	for _, p := range parts {
		p(m)
	}
	return m
}

func withDesc(d *protobufs.AgentDescription) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) { m.AgentDescription = d }
}

func withVersion(v string) func(*protobufs.AgentToServer) {
	return withDesc(desc([]*protobufs.KeyValue{str("service.name", "otelcol"), str("service.version", v)}))
}

func withHealth(h *protobufs.ComponentHealth) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) { m.Health = h }
}

func withRemoteConfig(hash []byte, status protobufs.RemoteConfigStatuses, errMsg string) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) {
		m.RemoteConfigStatus = &protobufs.RemoteConfigStatus{LastRemoteConfigHash: hash, Status: status, ErrorMessage: errMsg}
	}
}

// withEffective reports an effective configuration of name → body files.
func withEffective(files map[string]string) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) {
		cm := &protobufs.AgentConfigMap{ConfigMap: map[string]*protobufs.AgentConfigFile{}}
		for name, body := range files {
			cm.ConfigMap[name] = &protobufs.AgentConfigFile{Body: []byte(body), ContentType: "text/yaml"}
		}
		m.EffectiveConfig = &protobufs.EffectiveConfig{ConfigMap: cm}
	}
}

func withPackage(name string, p *protobufs.PackageStatus) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) {
		m.PackageStatuses = &protobufs.PackageStatuses{Packages: map[string]*protobufs.PackageStatus{name: p}}
	}
}

// hl is a component health: healthy, status, last error, start second.
func hl(healthy bool, status, lastError string, start int, children map[string]*protobufs.ComponentHealth) *protobufs.ComponentHealth {
	h := &protobufs.ComponentHealth{Healthy: healthy, Status: status, LastError: lastError, ComponentHealthMap: children}
	if start != 0 {
		h.StartTimeUnixNano = ns(start)
	}
	return h
}

// step is one child of the update component: status, start and status second, error.
func step(status string, start, statusAt int, lastError string) *protobufs.ComponentHealth {
	return &protobufs.ComponentHealth{Status: status, StartTimeUnixNano: ns(start), StatusTimeUnixNano: ns(statusAt), LastError: lastError}
}

func withCapabilities(c uint64) func(*protobufs.AgentToServer) {
	return func(m *protobufs.AgentToServer) { m.Capabilities = c }
}
