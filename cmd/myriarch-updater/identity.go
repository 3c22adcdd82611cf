package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/protobufs"
	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/adapters/updater"
)

// LinkAttribute is the non-identifying attribute that links the updater to
// the collector it updates: the collector's instance UID.
const LinkAttribute = "myriarch.updater.collector"

// instanceUID is the updater's own instance UID: a UUIDv7 made at the first
// start and kept in stateDir/instance_uid. A file that does not hold a UUID
// is an error, not a reason to make a new identity: the gateway bound the
// host's key to the old one.
func instanceUID(stateDir string) (uuid.UUID, error) {
	path := filepath.Join(stateDir, "instance_uid")
	b, err := os.ReadFile(path)
	if err == nil {
		id, err := uuid.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			return uuid.Nil, fmt.Errorf("%s: %w", path, err)
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return uuid.Nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return uuid.Nil, err
	}
	return id, updater.WriteFileAtomic(path, []byte(id.String()+"\n"), 0o644)
}

// collectorUID is the collector's instance UID in canonical form (lowercase
// 8-4-4-4-12): from the configuration, or from the OpAMP supervisor's
// persistent_state.yaml (instance_id: <uuid>), read anew each time, since
// a supervisor may change it.
func collectorUID(c Config) (string, error) {
	raw := c.Collector.InstanceUID
	if raw == "" {
		b, err := os.ReadFile(c.Collector.SupervisorState)
		if err != nil {
			return "", fmt.Errorf("collector.supervisorState: %w", err)
		}
		var state struct {
			InstanceID string `yaml:"instance_id"`
		}
		if err := yaml.Unmarshal(b, &state); err != nil {
			return "", fmt.Errorf("collector.supervisorState %s: %w", c.Collector.SupervisorState, err)
		}
		raw = state.InstanceID
	}
	id, err := uuid.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("the collector's instance UID %q: %w", raw, err)
	}
	return id.String(), nil
}

// description is what the updater says of itself: who it is, where, and
// which collector it updates.
func description(uid uuid.UUID, collector, version, host string) *protobufs.AgentDescription {
	return &protobufs.AgentDescription{
		IdentifyingAttributes: []*protobufs.KeyValue{
			kv("service.name", "myriarch-updater"),
			kv("service.instance.id", uid.String()),
			kv("service.version", version),
		},
		NonIdentifyingAttributes: []*protobufs.KeyValue{
			kv("host.name", host),
			kv("os.type", runtime.GOOS),
			kv("host.arch", runtime.GOARCH),
			kv(LinkAttribute, collector),
		},
	}
}

func kv(key, value string) *protobufs.KeyValue {
	return &protobufs.KeyValue{Key: key, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: value}}}
}
