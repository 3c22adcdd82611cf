package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

// UpdateComponent is the health component in which the myriarch-updater
// reports its attempt: children "version", "from" and "step:<name>".
const UpdateComponent = "dev.myriarch.update"

// Bounds on what one report may put into an agent item. DynamoDB refuses
// items over 400 KB, and an agent is not trusted to stay small.
const (
	maxAttributes   = 256  // further attributes are dropped
	maxKeyBytes     = 256  // longer attribute keys are dropped
	maxValueBytes   = 1024 // longer values are cut
	maxErrorBytes   = 4096 // lastError, error messages
	maxSteps        = 32   // step:<name> children of the update component
	maxNestingDepth = 4    // kvlist flattening and component search
)

// ErrMalformed marks a message that cannot be assigned to an agent.
var ErrMalformed = errors.New("malformed OpAMP message")

// Translate folds one AgentToServer message into the previous view of the
// agent, as received at now. OpAMP agents send a field only when it changed,
// so an absent field keeps the previous value. Times the agent reports are
// its own; Since-style times (VersionSince, RemoteConfig.Since,
// Health.ReportedAt) are server receive times and change only with the facts
// they date. Connection facts (Online, LastSeen, ConnectedAt) are the
// caller's. packageName is the OpAMP package of the collector ("" for the
// supervisor's top-level package).
func Translate(prev agent.Agent, msg *protobufs.AgentToServer, now time.Time, packageName string) (agent.Agent, error) {
	id, err := InstanceID(msg.GetInstanceUid())
	if err != nil {
		return prev, err
	}
	if prev.ID != "" && prev.ID != id {
		return prev, fmt.Errorf("%w: instance uid %s on the connection of %s", ErrMalformed, id, prev.ID)
	}
	next := prev
	next.ID = id
	if c := msg.GetCapabilities(); c != 0 { // 0: not sent, unchanged
		next.Capabilities = c
	}
	if d := msg.GetAgentDescription(); d != nil {
		next.Attributes = Attributes(d)
		next.ServiceVersion = next.Attributes["service.version"]
		next.VersionSince = since(next.ServiceVersion == prev.ServiceVersion, prev.VersionSince, now)
		if next.ServiceVersion == "" {
			next.VersionSince = time.Time{} // no version, nothing to date
		}
	}
	if h := msg.GetHealth(); h != nil {
		next.Health, next.Update = health(prev.Health, h, now)
	}
	if rc := msg.GetRemoteConfigStatus(); rc != nil {
		next.RemoteConfig = remoteConfig(prev.RemoteConfig, rc, now)
	}
	if ec := msg.GetEffectiveConfig(); ec != nil {
		next.EffectiveHash = EffectiveConfigHash(ec.GetConfigMap())
	}
	if ps := msg.GetPackageStatuses(); ps != nil {
		next.Package = packageStatus(ps.GetPackages()[packageName])
		same := next.Package.Version == prev.Package.Version && next.Package.Status == prev.Package.Status
		next.Package.Since = since(same, prev.Package.Since, now)
		if next.Package.Status == "" {
			next.Package.Since = time.Time{} // nothing reported, nothing to date
		}
	}
	return next, nil
}

// EffectiveConfigHash is the identity of a reported effective
// configuration, stable whatever order the agent sends its files in. One
// file (the form in which the gateway sends a remote configuration) hashes
// like a rendered configuration, hex sha256 of its body, whatever its name,
// so that a collector that runs exactly what it was sent reports its
// desired hash. Several files hash as hex sha256 of each file in name
// order, as length-prefixed name, content type and body. No file gives "".
// Example: {"": "receivers: ..."} → sha256("receivers: ...").
func EffectiveConfigHash(m *protobufs.AgentConfigMap) string {
	files := m.GetConfigMap()
	switch len(files) {
	case 0:
		return ""
	case 1:
		for _, f := range files {
			sum := sha256.Sum256(f.GetBody())
			return hex.EncodeToString(sum[:])
		}
	}
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		field([]byte(name))
		field([]byte(files[name].GetContentType()))
		field(files[name].GetBody())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// InstanceID is the agent id: the 16-byte instance UID in UUID form.
func InstanceID(uid []byte) (string, error) {
	if len(uid) != 16 {
		return "", fmt.Errorf("%w: instance uid of %d bytes, want 16", ErrMalformed, len(uid))
	}
	h := hex.EncodeToString(uid)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// Attributes flattens the identifying and non-identifying attributes into one
// map; an identifying attribute wins over a non-identifying one of the same
// key. Scalars become strings; a key-value list becomes dotted keys, so that
// a label map {"labels": {"env": "prod"}} and a plain attribute "labels.env"
// both read labels.env = prod. Arrays and bytes are skipped: selectors match
// strings. service.version is normalized without a leading v.
func Attributes(d *protobufs.AgentDescription) map[string]string {
	out := make(map[string]string, len(d.GetIdentifyingAttributes())+len(d.GetNonIdentifyingAttributes()))
	for _, kv := range d.GetIdentifyingAttributes() {
		flatten(out, kv.GetKey(), kv.GetValue(), 0)
	}
	nonIdentifying := make(map[string]string)
	for _, kv := range d.GetNonIdentifyingAttributes() {
		flatten(nonIdentifying, kv.GetKey(), kv.GetValue(), 0)
	}
	for _, k := range slices.Sorted(maps.Keys(nonIdentifying)) { // sorted: the same report keeps the same attributes at the bound
		if _, taken := out[k]; !taken && len(out) < maxAttributes {
			out[k] = nonIdentifying[k]
		}
	}
	if v, ok := out["service.version"]; ok {
		out["service.version"] = NormalizeVersion(v)
	}
	return out
}

func flatten(out map[string]string, key string, v *protobufs.AnyValue, depth int) {
	key = clean(key, maxKeyBytes)
	if key == "" || len(out) >= maxAttributes || depth > maxNestingDepth {
		return
	}
	switch x := v.GetValue().(type) {
	case *protobufs.AnyValue_StringValue:
		out[key] = clean(x.StringValue, maxValueBytes)
	case *protobufs.AnyValue_BoolValue:
		out[key] = strconv.FormatBool(x.BoolValue)
	case *protobufs.AnyValue_IntValue:
		out[key] = strconv.FormatInt(x.IntValue, 10)
	case *protobufs.AnyValue_DoubleValue:
		out[key] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *protobufs.AnyValue_KvlistValue:
		for _, kv := range x.KvlistValue.GetValues() {
			flatten(out, key+"."+kv.GetKey(), kv.GetValue(), depth+1)
		}
	}
}

// NormalizeVersion drops surrounding space and a leading v before a digit:
// "v0.110.0" → "0.110.0"; "0.110.0" and "latest" stay.
func NormalizeVersion(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 1 && (v[0] == 'v' || v[0] == 'V') && v[1] >= '0' && v[1] <= '9' {
		return v[1:]
	}
	return v
}

// health maps the top-level component to agent.Health and finds the
// updater's component in the tree. ReportedAt moves only when the collector's
// health facts change (or on the first report), so a repeated report does
// not look like a new one to the engine.
func health(prev agent.Health, h *protobufs.ComponentHealth, now time.Time) (agent.Health, *agent.UpdateComponent) {
	next := agent.Health{
		Healthy:   h.GetHealthy(),
		Status:    clean(h.GetStatus(), maxValueBytes),
		LastError: clean(h.GetLastError(), maxErrorBytes),
		StartTime: unixNano(h.GetStartTimeUnixNano()),
	}
	// The component summary does not date the report: ReportedAt tells the
	// engine a report of the process's health, which the top-level facts are.
	same := !prev.ReportedAt.IsZero() && prev.Healthy == next.Healthy && prev.Status == next.Status &&
		prev.LastError == next.LastError && prev.StartTime.Equal(next.StartTime)
	next.ReportedAt = since(same, prev.ReportedAt, now)
	next.Components = componentSummary(h)
	return next, updateComponent(findComponent(h, 0))
}

// componentSummary counts the leaves of the tree below the process and
// names the unhealthy ones by their path ("pipeline:traces/exporter:otlp"),
// sorted, the first agent.MaxUnhealthyNames of them. The updater's
// component is left out at any depth: it is no part of the collector, and
// Agent.Update carries it. A node at maxNestingDepth counts as a leaf
// whatever it holds, so that a deep tree costs no more than a shallow one.
// A tree without components gives nil. Example: {pipeline:traces:
// {receiver:otlp ok, exporter:otlp failing}, extensions: {extension:health_check ok}}
// → total 3, unhealthy [pipeline:traces/exporter:otlp].
func componentSummary(h *protobufs.ComponentHealth) *agent.ComponentSummary {
	var s agent.ComponentSummary
	var walk func(c *protobufs.ComponentHealth, path string, depth int)
	walk = func(c *protobufs.ComponentHealth, path string, depth int) {
		for name, child := range c.GetComponentHealthMap() {
			if name == UpdateComponent {
				continue
			}
			p := clean(name, maxKeyBytes)
			if path != "" {
				p = path + "/" + p
			}
			if len(child.GetComponentHealthMap()) > 0 && depth < maxNestingDepth {
				walk(child, p, depth+1)
				continue
			}
			s.Total++
			if !child.GetHealthy() {
				s.Unhealthy = append(s.Unhealthy, clean(p, maxValueBytes))
			}
		}
	}
	walk(h, "", 1)
	if s.Total == 0 {
		return nil
	}
	s.UnhealthyCount = len(s.Unhealthy)
	slices.Sort(s.Unhealthy)
	if len(s.Unhealthy) > agent.MaxUnhealthyNames {
		s.Unhealthy = s.Unhealthy[:agent.MaxUnhealthyNames:agent.MaxUnhealthyNames]
	}
	return &s
}

// findComponent finds the update component at any depth; should there be
// several, the one under the smallest name wins, so that the same tree
// always gives the same answer.
func findComponent(h *protobufs.ComponentHealth, depth int) *protobufs.ComponentHealth {
	if c, ok := h.GetComponentHealthMap()[UpdateComponent]; ok {
		return c
	}
	if depth >= maxNestingDepth {
		return nil
	}
	var found *protobufs.ComponentHealth
	foundUnder := ""
	for name, child := range h.GetComponentHealthMap() {
		if found != nil && name >= foundUnder {
			continue
		}
		if c := findComponent(child, depth+1); c != nil {
			found, foundUnder = c, name
		}
	}
	return found
}

// updateComponent reads the updater's attempt: version and from carry their
// value in status; every step:<name> child is one step, keyed as reported.
func updateComponent(c *protobufs.ComponentHealth) *agent.UpdateComponent {
	if c == nil {
		return nil
	}
	u := &agent.UpdateComponent{
		Status:    clean(c.GetStatus(), maxValueBytes),
		StartedAt: unixNano(c.GetStartTimeUnixNano()),
	}
	for name, child := range c.GetComponentHealthMap() {
		switch {
		case name == "version":
			u.Version = clean(child.GetStatus(), maxValueBytes)
		case name == "from":
			u.From = clean(child.GetStatus(), maxValueBytes)
		case strings.HasPrefix(name, "step:"):
			if u.Steps == nil {
				u.Steps = make(map[string]agent.UpdateStep)
			}
			u.Steps[clean(name, maxKeyBytes)] = agent.UpdateStep{
				Status:     clean(child.GetStatus(), maxValueBytes),
				StartedAt:  unixNano(child.GetStartTimeUnixNano()),
				StatusTime: unixNano(child.GetStatusTimeUnixNano()),
				LastError:  clean(child.GetLastError(), maxErrorBytes),
			}
		}
	}
	if len(u.Steps) > maxSteps { // keep the first names, the same ones every time
		for _, name := range slices.Sorted(maps.Keys(u.Steps))[maxSteps:] {
			delete(u.Steps, name)
		}
	}
	return u
}

var remoteConfigStatuses = map[protobufs.RemoteConfigStatuses]string{
	protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED:  agent.ConfigApplied,
	protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING: agent.ConfigApplying,
	protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED:   agent.ConfigFailed,
}

// remoteConfig maps the status with the hash in hex (the form of rendered
// configuration hashes); UNSET becomes an empty status.
func remoteConfig(prev agent.RemoteConfigStatus, rc *protobufs.RemoteConfigStatus, now time.Time) agent.RemoteConfigStatus {
	next := agent.RemoteConfigStatus{
		Hash:   hex.EncodeToString(rc.GetLastRemoteConfigHash()),
		Status: remoteConfigStatuses[rc.GetStatus()],
		Error:  clean(rc.GetErrorMessage(), maxErrorBytes),
	}
	next.Since = since(prev.Hash == next.Hash && prev.Status == next.Status, prev.Since, now)
	return next
}

var packageStatuses = map[protobufs.PackageStatusEnum]string{
	protobufs.PackageStatusEnum_PackageStatusEnum_Installed:      agent.PackageInstalled,
	protobufs.PackageStatusEnum_PackageStatusEnum_InstallPending: agent.PackageInstallPending,
	protobufs.PackageStatusEnum_PackageStatusEnum_Installing:     agent.PackageInstalling,
	protobufs.PackageStatusEnum_PackageStatusEnum_InstallFailed:  agent.PackageInstallFailed,
	protobufs.PackageStatusEnum_PackageStatusEnum_Downloading:    agent.PackageDownloading,
}

// packageStatus maps the collector package's status. Its version is the one
// the status is about: the offered version while an offer is worked on or
// failed, the installed one otherwise; normalized without a leading v. A
// missing package is the zero status.
func packageStatus(p *protobufs.PackageStatus) agent.PackageStatus {
	if p == nil {
		return agent.PackageStatus{}
	}
	status := packageStatuses[p.GetStatus()]
	version := p.GetAgentHasVersion()
	if status != agent.PackageInstalled && p.GetServerOfferedVersion() != "" {
		version = p.GetServerOfferedVersion()
	}
	return agent.PackageStatus{
		Version:         NormalizeVersion(clean(version, maxValueBytes)),
		Status:          status,
		DownloadPercent: percent(p.GetDownloadDetails().GetDownloadPercent()),
		Error:           clean(p.GetErrorMessage(), maxErrorBytes),
	}
}

// percent rounds and clamps a reported percentage to 0..100.
func percent(p float64) int {
	if math.IsNaN(p) || p <= 0 {
		return 0
	}
	return int(math.Round(math.Min(p, 100)))
}

// since keeps prev when the dated fact is unchanged and prev is set, else now.
func since(unchanged bool, prev, now time.Time) time.Time {
	if unchanged && !prev.IsZero() {
		return prev
	}
	return now
}

func unixNano(ns uint64) time.Time {
	if ns == 0 || ns > math.MaxInt64 {
		return time.Time{}
	}
	return time.Unix(0, int64(ns)).UTC()
}

// clean makes a wire string storable: valid UTF-8, at most max bytes, cut on
// a rune boundary.
func clean(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
