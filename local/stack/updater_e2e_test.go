//go:build supervisor

package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/stack/updatertest"
)

// The myriarch-updater beside the OpenTelemetry OpAMP supervisor, on the
// local stack, with real collectors (make supervisor-test builds them):
// the supervisor runs root/current/otelcol-contrib, the updater installs
// the versions a mirror on loopback serves (signed with minisign, listed
// in a checksums file) and restarts the supervisor, and version rollouts
// started through the REST API carry it from one version to the next. The
// scenarios run in order on one host, each from where the last left it:
//
//	tampered archive   0.150.0 refused at verifying; 0.149.0 runs on
//	exits at start     0.151.0 fails its health check and is rolled back
//	update succeeds    0.150.0, every step in the target's progress
//	updater killed     back to 0.149.0 (the one-step return), the updater
//	                   SIGKILLed halfway through the download, restarted
//	rollout rollback   0.150.0 installed, the rollout rolled back: 0.149.0
func TestSupervisor_Updater(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	bins := map[string]string{}
	for _, k := range []string{"MYRIARCH_SUPERVISOR_BIN", "MYRIARCH_OTELCOL_BIN", "MYRIARCH_OTELCOL_NEXT_BIN", "MYRIARCH_UPDATER_BIN"} {
		if bins[k] = os.Getenv(k); bins[k] == "" {
			t.Fatalf("%s is not set: run make supervisor-test", k)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()

	mirror := updatertest.New(t)
	mirror.Add(t, "0.149.0", "otelcol-contrib", mustRead(t, bins["MYRIARCH_OTELCOL_BIN"]))
	mirror.Add(t, "0.150.0", "otelcol-contrib", mustRead(t, bins["MYRIARCH_OTELCOL_NEXT_BIN"]))
	mirror.Add(t, "0.151.0", "otelcol-contrib", []byte("#!/bin/sh\necho 'otelcol-contrib 0.151.0 exits at start (the rollback case)' >&2\nexit 1\n"))
	archive, checksums, signature := mirror.Templates()
	s := startTestStack(t, ctx, "updater-test-", func(o *Options) {
		o.Releases = []string{"0.149.0", "0.150.0", "0.151.0"}
		o.Packages = PackageSource{DownloadURL: archive, ChecksumsURL: checksums, SignatureURL: signature}
	})
	h := newUpdaterHost(t, s, bins, mirror)
	defer h.logOnFailure()
	h.startSupervisor()
	// The updater reads the collector's UID from the supervisor's state at
	// its start and exits without it (its unit restarts it): start it once
	// the supervisor has written it.
	waitFor(ctx, t, "the supervisor's persistent_state.yaml", func() bool {
		_, err := os.Stat(filepath.Join(h.state, "persistent_state.yaml"))
		return err == nil
	})
	h.startUpdater()
	h.waitLinked(ctx)

	c := client{base: s.APIURL, token: s.AdminToken}
	h.applyRevision(ctx, c)
	h.waitCollector(ctx, "0.149.0")

	t.Run("tampered archive fails at verifying", func(t *testing.T) {
		mirror.Tamper("0.150.0", true)
		defer mirror.Tamper("0.150.0", false)
		id := selectVersion(ctx, t, c, "0.150.0")
		endRollout(ctx, t, c, id)
		tg := onlyTarget(ctx, t, c, id)
		tg.want(t, "failed", "failed")
		tg.wantStep(t, "verifying", "failed")
		abortRollout(ctx, t, c, id)
		h.waitCollector(ctx, "0.149.0")
		h.wantCurrent(t, "0.149.0")
	})
	t.Run("a collector that exits at start is rolled back", func(t *testing.T) {
		id := selectVersion(ctx, t, c, "0.151.0")
		endRollout(ctx, t, c, id)
		tg := onlyTarget(ctx, t, c, id)
		tg.want(t, "failed", "rolled_back")
		tg.wantStep(t, "health_check", "failed")
		tg.wantStep(t, "rolling_back", "done")
		abortRollout(ctx, t, c, id)
		h.waitCollector(ctx, "0.149.0")
		h.wantCurrent(t, "0.149.0")
	})
	t.Run("the update succeeds", func(t *testing.T) {
		id := selectVersion(ctx, t, c, "0.150.0")
		if r := endRollout(ctx, t, c, id); r.Status != "completed" {
			t.Fatalf("rollout %s is %s (%s), want completed", id, r.Status, r.StatusReason)
		}
		tg := onlyTarget(ctx, t, c, id)
		tg.want(t, "succeeded", "succeeded")
		for _, step := range []string{"offered", "downloading", "verifying", "installing", "restarting", "health_check", "health_wait"} {
			tg.wantStep(t, step, "done")
		}
		h.waitCollector(ctx, "0.150.0")
		h.wantCurrent(t, "0.150.0")
		offered, healthy := tg.step("offered").StartedAt, tg.step("health_check").FinishedAt
		if offered != nil && healthy != nil {
			t.Logf("FIGURE one update, offer to healthy: %s (offered %s, health_check done %s)",
				healthy.Sub(*offered).Round(time.Millisecond), offered.Format(time.RFC3339Nano), healthy.Format(time.RFC3339Nano))
		}
	})
	t.Run("the updater killed mid-download resumes", func(t *testing.T) {
		halfSent, release := mirror.Stall("0.149.0")
		defer release()
		id := selectVersion(ctx, t, c, "0.149.0") // the one-step return to previous
		select {
		case <-halfSent:
		case <-ctx.Done():
			t.Fatal("the download of 0.149.0 never began")
		}
		waitFor(ctx, t, "the target at downloading", func() bool {
			tg, err := targetOf(ctx, c, id)
			return err == nil && tg.Progress != nil && tg.Progress.Phase == "downloading"
		})
		h.killUpdater()
		release()
		h.startUpdater()
		if r := endRollout(ctx, t, c, id); r.Status != "completed" {
			t.Fatalf("rollout %s is %s (%s), want completed", id, r.Status, r.StatusReason)
		}
		tg := onlyTarget(ctx, t, c, id)
		tg.want(t, "succeeded", "succeeded")
		tg.wantStep(t, "health_check", "done")
		h.waitCollector(ctx, "0.149.0")
		h.wantCurrent(t, "0.149.0")
	})
	t.Run("the rollout's rollback returns the host", func(t *testing.T) {
		id := selectVersion(ctx, t, c, "0.150.0")
		waitFor(ctx, t, "the target in its health wait on 0.150.0", func() bool {
			tg, err := targetOf(ctx, c, id)
			return err == nil && tg.Progress != nil && tg.Progress.Phase == "health_wait"
		})
		h.wantCurrent(t, "0.150.0")
		if err := c.do(ctx, "POST", "/api/v1/rollouts/"+id+"/actions/rollback", map[string]any{}, nil); err != nil {
			t.Fatalf("rollback: %v", err)
		}
		if r := endRollout(ctx, t, c, id); r.Status != "rolled_back" {
			t.Errorf("rollout %s is %s (%s), want rolled_back", id, r.Status, r.StatusReason)
		}
		h.waitCollector(ctx, "0.149.0")
		h.wantCurrent(t, "0.149.0")
	})
	if d, _ := time.ParseDuration(os.Getenv("MYRIARCH_UPDATER_IDLE")); d > 0 && !t.Failed() {
		h.measureIdle(ctx, d)
	}
}

// updaterHost is one host: the collector's directory, the supervisor run
// as a service that comes back when it exits (systemd's Restart=always),
// and the updater.
type updaterHost struct {
	t                    *testing.T
	s                    *Stack
	bins                 map[string]string
	dir, root, state     string
	supEnv               []string
	updaterConfig        string
	mu                   sync.Mutex
	supRuns, updaterRuns int
	updater              *exec.Cmd
	stopping             bool
}

func newUpdaterHost(t *testing.T, s *Stack, bins map[string]string, m *updatertest.Mirror) *updaterHost {
	t.Helper()
	dir := t.TempDir()
	h := &updaterHost{t: t, s: s, bins: bins, dir: dir, root: filepath.Join(dir, "root"), state: filepath.Join(dir, "supervisor")}
	example, err := filepath.Abs("../../examples/supervisor")
	if err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(h.root, "versions", "0.149.0")
	mustDo(t, os.MkdirAll(seed, 0o755), os.MkdirAll(h.state, 0o755), os.MkdirAll(filepath.Join(dir, "logs"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(seed, "otelcol-contrib"), mustRead(t, bins["MYRIARCH_OTELCOL_BIN"]), 0o755),
		os.Symlink("versions/0.149.0", filepath.Join(h.root, "current")))
	var k [32]byte
	_, _ = rand.Read(k[:])
	health := freePort(t)
	h.supEnv = append(os.Environ(), "MYRIARCH_OPAMP_URL="+s.GatewayURL, "MYRIARCH_AGENT_TOKEN="+s.AgentToken,
		"MYRIARCH_AGENT_KEY="+hex.EncodeToString(k[:]), "OTELCOL_BIN="+filepath.Join(h.root, "current", "otelcol-contrib"),
		"SUPERVISOR_STATE_DIR="+h.state, "SUPERVISOR_EXAMPLE_DIR="+example, "COLLECTOR_HEALTH_PORT="+strconv.Itoa(health))

	// The restart command: stop the supervisor and wait until it has gone
	// with its collector (its process group), as systemctl restart does; the service loop
	// starts it again from current.
	restart := filepath.Join(dir, "restart-supervisor.sh")
	mustDo(t, os.WriteFile(restart, []byte(`#!/bin/sh
pid=$(cat "$1") || exit 0
kill -TERM "$pid" 2>/dev/null || exit 0
while kill -0 -- "-$pid" 2>/dev/null; do sleep 0.1; done
`), 0o755))
	_, _ = rand.Read(k[:])
	mustDo(t, os.WriteFile(filepath.Join(dir, "token"), []byte(s.AgentToken+"\n"), 0o600),
		os.WriteFile(filepath.Join(dir, "key"), []byte(hex.EncodeToString(k[:])+"\n"), 0o600))
	h.updaterConfig = filepath.Join(dir, "updater.yaml")
	cfg := fmt.Sprintf(`server:
  endpoint: %s
  tokenFile: %s/token
  keyFile: %s/key
stateDir: %s/updater-state
collector:
  root: %s
  binary: otelcol-contrib
  supervisorState: %s/persistent_state.yaml
  restartCommand: [%s, %s/supervisor.pid]
  healthURL: http://127.0.0.1:%d/status
  healthTimeout: 20s
  versionCommand: [%s/current/otelcol-contrib, --version]
verify:
  minisignPublicKey: %s/mirror.pub
allowedURLPrefixes: [%s]
`, s.GatewayURL, dir, dir, dir, h.root, h.state, restart, dir, health, h.root, dir, m.Prefix())
	mustDo(t, os.WriteFile(h.updaterConfig, []byte(cfg), 0o600),
		os.WriteFile(filepath.Join(dir, "mirror.pub"), []byte(m.PublicKey), 0o644))
	t.Cleanup(h.stop)
	return h
}

// startSupervisor runs the supervisor as a service: started again 200 ms
// after every exit, until the test ends.
func (h *updaterHost) startSupervisor() {
	example, _ := filepath.Abs("../../examples/supervisor/supervisor.yaml")
	done := make(chan struct{})
	h.t.Cleanup(func() { h.stop(); <-done })
	go func() {
		defer close(done)
		for {
			h.mu.Lock()
			if h.stopping {
				h.mu.Unlock()
				return
			}
			h.supRuns++
			cmd := exec.Command(h.bins["MYRIARCH_SUPERVISOR_BIN"], "--config", example)
			cmd.Env, cmd.Dir = h.supEnv, h.state
			out, err := os.Create(filepath.Join(h.dir, "logs", fmt.Sprintf("supervisor-%d.log", h.supRuns)))
			if err == nil {
				cmd.Stdout, cmd.Stderr = out, out
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
				err = cmd.Start()
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(h.dir, "supervisor.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
			}
			h.mu.Unlock()
			if err != nil {
				h.t.Errorf("start the supervisor: %v", err)
				return
			}
			_ = cmd.Wait()
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // a collector left behind
			out.Close()
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

func (h *updaterHost) startUpdater() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updaterRuns++
	out, err := os.Create(filepath.Join(h.dir, "logs", fmt.Sprintf("updater-%d.log", h.updaterRuns)))
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(h.bins["MYRIARCH_UPDATER_BIN"], "-config", h.updaterConfig)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.updater = cmd
}

func (h *updaterHost) killUpdater() {
	h.mu.Lock()
	cmd := h.updater
	h.updater = nil
	h.mu.Unlock()
	if cmd != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func (h *updaterHost) stop() {
	h.killUpdater()
	h.mu.Lock()
	h.stopping = true
	h.mu.Unlock()
	if b, err := os.ReadFile(filepath.Join(h.dir, "supervisor.pid")); err == nil {
		if pid, _ := strconv.Atoi(string(b)); pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// waitLinked waits for the collector and its updater, linked, online.
func (h *updaterHost) waitLinked(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var as []agent.Agent
	defer func() {
		if h.t.Failed() {
			for _, a := range as {
				h.t.Logf("agent %s online %v linked to %q version %q", a.ID, a.Online, a.LinkedCollector(), a.ServiceVersion)
			}
		}
	}()
	waitFor(ctx, h.t, "the collector and its linked updater online", func() bool {
		var err error
		as, err = h.s.Deps.Store.AllAgents(ctx)
		if err != nil || len(as) != 2 {
			return false
		}
		byID := map[string]agent.Agent{}
		for _, a := range as {
			byID[a.ID] = a
		}
		for _, a := range as {
			if col, ok := byID[a.LinkedCollector()]; ok && a.Online && col.Online {
				return true
			}
		}
		return false
	})
}

// waitCollector waits for the collector to be online reporting version.
func (h *updaterHost) waitCollector(ctx context.Context, version string) {
	h.t.Helper()
	waitFor(ctx, h.t, "the collector online on "+version, func() bool {
		as, err := h.s.Deps.Store.AllAgents(ctx)
		if err != nil {
			return false
		}
		for _, a := range as {
			if !a.IsUpdater() && a.Online && a.ServiceVersion == version {
				return true
			}
		}
		return false
	})
}

func (h *updaterHost) wantCurrent(t *testing.T, version string) {
	t.Helper()
	if got, err := os.Readlink(filepath.Join(h.root, "current")); err != nil || got != "versions/"+version {
		t.Errorf("current -> %q (%v), want versions/%s", got, err, version)
	}
}

// applyRevision applies the quickstart with fleet edge at 0.149.0 and the
// mirror's versions in its range, no approvals, and waits for the
// rollouts it made to end.
func (h *updaterHost) applyRevision(ctx context.Context, c client) {
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		h.t.Fatal(err)
	}
	files = withHealthWait(files, "10s")
	files["policies/demo-config.yaml"] = []byte(strings.Replace(string(files["policies/demo-config.yaml"]), "requireApproval: true", "requireApproval: false", 1))
	fleet := strings.Replace(string(files["fleets/edge.yaml"]), "version: 0.161.0", "version: 0.149.0", 1)
	// After a failed 0.151.0 the fleet's target is 0.151.0: selecting
	// 0.150.0 or 0.149.0 then is a downgrade of the target.
	fleet = strings.Replace(fleet, "      enabled: true\n", "      enabled: true\n      allowDowngrade: true\n", 1)
	files["fleets/edge.yaml"] = []byte(strings.Replace(fleet, `">=0.161.0, <=0.163.0"`, `">=0.149.0, <=0.151.0"`, 1))
	// A failed target pauses the rollout, so that its progress stays the
	// updater's (a rollout's rollback shows its own final picture).
	files["policies/demo-version.yaml"] = []byte(strings.Replace(string(files["policies/demo-version.yaml"]), "onFailure: rollback", "onFailure: pause", 1))
	// The collector's OTLP receiver on a port of its own, not 4317.
	files["configs/edge.yaml"] = []byte(strings.Replace(string(files["configs/edge.yaml"]), "0.0.0.0:4317", "127.0.0.1:"+strconv.Itoa(freePort(h.t)), 1))
	out, err := h.s.applyResult(ctx, c, files, "updater-1")
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range out.Fleets {
		for _, p := range f.Plans {
			if p.RolloutID != "" {
				endRollout(ctx, h.t, c, p.RolloutID)
			}
		}
	}
}

// measureIdle samples the updater's resident memory and CPU time over d
// with nothing to do (the figures of docs/updater.md).
func (h *updaterHost) measureIdle(ctx context.Context, d time.Duration) {
	h.mu.Lock()
	pid := h.updater.Process.Pid
	h.mu.Unlock()
	cpu0, maxRSS := cpuTicks(h.t, pid), 0
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if rss := rssKiB(h.t, pid); rss > maxRSS {
			maxRSS = rss
		}
		if sleep(ctx, time.Second) != nil {
			return
		}
	}
	ticks := cpuTicks(h.t, pid) - cpu0 // USER_HZ is 100 on Linux
	h.t.Logf("FIGURE updater idle over %s: VmRSS %d KiB (max, last %d KiB), CPU %d ms (%.3f%% of a core)",
		d, maxRSS, rssKiB(h.t, pid), ticks*10, float64(ticks*10)/float64(d.Milliseconds())*100)
}

func rssKiB(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no VmRSS")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// cpuTicks is utime + stime of /proc/<pid>/stat (fields 14 and 15).
func cpuTicks(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	st := string(b)
	f := strings.Fields(st[strings.LastIndexByte(st, ')')+2:]) // fields from 3 on
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

func (h *updaterHost) logOnFailure() {
	if !h.t.Failed() {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(h.dir, "logs", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		h.t.Logf("%s:\n%s", filepath.Base(l), tail(string(b), 5000))
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "updater-state", "update.json")); err == nil {
		h.t.Logf("update.json: %s", b)
	}
}

type updateStep struct {
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	StartedAt  *time.Time `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	Detail     string     `json:"detail"`
}

type versionTarget struct {
	AgentID  string `json:"agentId"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	Progress *struct {
		Phase       string       `json:"phase"`
		Source      string       `json:"source"`
		Steps       []updateStep `json:"steps"`
		Error       string       `json:"error"`
		FromVersion string       `json:"fromVersion"`
		ToVersion   string       `json:"toVersion"`
	} `json:"progress"`
}

func (tg versionTarget) String() string {
	if tg.Progress == nil {
		return fmt.Sprintf("%s (%s), no progress", tg.Status, tg.Reason)
	}
	steps := []string{}
	for _, s := range tg.Progress.Steps {
		steps = append(steps, s.Name+":"+s.Status)
	}
	return fmt.Sprintf("%s (%s), phase %s, error %q, steps %v", tg.Status, tg.Reason, tg.Progress.Phase, tg.Progress.Error, steps)
}

func (tg versionTarget) want(t *testing.T, status, phase string) {
	t.Helper()
	if tg.Status != status || tg.Progress == nil || tg.Progress.Phase != phase {
		t.Errorf("target %s, want %s with phase %s", tg, status, phase)
	}
}

func (tg versionTarget) step(name string) updateStep {
	if tg.Progress != nil {
		for _, s := range tg.Progress.Steps {
			if s.Name == name {
				return s
			}
		}
	}
	return updateStep{}
}

func (tg versionTarget) wantStep(t *testing.T, name, status string) {
	t.Helper()
	if got := tg.step(name); got.Status != status {
		t.Errorf("step %s is %q, want %s; target %s", name, got.Status, status, tg)
	}
}

func targetOf(ctx context.Context, c client, id string) (versionTarget, error) {
	var list struct{ Items []versionTarget }
	if err := c.do(ctx, "GET", "/api/v1/rollouts/"+id+"/targets", nil, &list); err != nil {
		return versionTarget{}, err
	}
	if len(list.Items) != 1 {
		return versionTarget{}, fmt.Errorf("rollout %s has %d targets, want 1", id, len(list.Items))
	}
	return list.Items[0], nil
}

func onlyTarget(ctx context.Context, t *testing.T, c client, id string) versionTarget {
	t.Helper()
	tg, err := targetOf(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rollout %s: target %s", id, tg)
	return tg
}

// abortRollout ends a paused rollout, so that the fleet takes the next.
func abortRollout(ctx context.Context, t *testing.T, c client, id string) {
	t.Helper()
	if err := c.do(ctx, "POST", "/api/v1/rollouts/"+id+"/actions/abort", map[string]any{}, nil); err != nil {
		t.Fatalf("abort %s: %v", id, err)
	}
	if r := endRollout(ctx, t, c, id); r.Status != "aborted" {
		t.Fatalf("rollout %s is %s after abort", id, r.Status)
	}
}

// endRollout waits for the rollout to reach a final status.
func endRollout(ctx context.Context, t *testing.T, c client, id string) rolloutView {
	t.Helper()
	var r rolloutView
	waitFor(ctx, t, "rollout "+id+" to end", func() bool {
		if err := c.do(ctx, "GET", "/api/v1/rollouts/"+id, nil, &r); err != nil {
			return false
		}
		switch r.Status {
		case "completed", "paused", "failed", "rolled_back", "aborted", "superseded":
			return true
		}
		return false
	})
	t.Logf("rollout %s (%s) ended %s (%s), targets %v", id, r.Kind, r.Status, r.StatusReason, r.TargetCounts)
	return r
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
