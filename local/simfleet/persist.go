package simfleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/encoding/protojson"
)

// persisted is what a collector keeps across its own restarts, as the
// OpAMP supervisor keeps the last remote configuration in its storage
// directory: the version it runs, its effective configuration and the
// status of the last remote configuration. Without it, a fleet restarted
// with the local stack would come back on the bootstrap configuration and
// fail every health wait in flight.
type persisted struct {
	Version   string          `json:"version"`
	Effective json.RawMessage `json:"effective"`
	Remote    json.RawMessage `json:"remote,omitempty"`
	// Credential is the agent's own, which the gateway bound at its first
	// connection: a restarted agent that lost it would be refused.
	Credential string `json:"credential,omitempty"`
}

func (a *agent) stateFile() string {
	return filepath.Join(a.cfg.StateDir, HostName(a.n)+".json")
}

// restore loads the state of an earlier run, if there is one.
func (a *agent) restore() error {
	if a.cfg.StateDir == "" {
		return nil
	}
	b, err := os.ReadFile(a.stateFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var p persisted
	effective := &protobufs.AgentConfigMap{}
	if err := json.Unmarshal(b, &p); err != nil || protojson.Unmarshal(p.Effective, effective) != nil {
		return fmt.Errorf("simfleet: state %s is not readable: delete it to start afresh", a.stateFile())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.Remote != nil {
		remote := &protobufs.RemoteConfigStatus{}
		if err := protojson.Unmarshal(p.Remote, remote); err != nil {
			return fmt.Errorf("simfleet: state %s: %w", a.stateFile(), err)
		}
		a.remote = remote
	}
	a.version, a.pkg.hasVersion, a.effective, a.credential = p.Version, p.Version, effective, p.Credential
	a.setConfigExportFailureLocked(&protobufs.AgentRemoteConfig{Config: effective})
	return nil
}

// persist writes the state, replacing the file in one rename so that a
// killed fleet never leaves half of it.
func (a *agent) persist() {
	if a.cfg.StateDir == "" {
		return
	}
	a.mu.Lock()
	p := persisted{Version: a.version, Credential: a.credential}
	p.Effective, _ = protojson.Marshal(a.effective)
	if a.remote != nil {
		p.Remote, _ = protojson.Marshal(a.remote)
	}
	a.mu.Unlock()
	b, _ := json.Marshal(p)
	tmp := a.stateFile() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		a.log.Warn("persist state", "error", err.Error())
		return
	}
	if err := os.Rename(tmp, a.stateFile()); err != nil {
		a.log.Warn("persist state", "error", err.Error())
	}
}
