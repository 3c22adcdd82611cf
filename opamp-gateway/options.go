package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/myriarch/myriarch/adapters/gateway"
)

// Default addresses: loopback, so that a gateway started by hand serves
// nobody else. A container listens on every interface: the Dockerfile and
// the task definition (infra/gateway.go) set ":4320" and ":8080".
const (
	DefaultListen       = "127.0.0.1:4320"
	DefaultHealthListen = "127.0.0.1:8080"
)

// options are the gateway's settings from flags and the environment.
type options struct {
	listen, healthListen string
	debugListen          string // pprof, loopback only; "" = off
	tablePrefix          string
	tokensEnv            string // MYRIARCH_AGENT_TOKENS, comma-separated
	tokensFile           string
	tlsCert, tlsKey      string
	pollInterval         time.Duration
	heartbeat            time.Duration
	offlineHeartbeats    int // a count of heartbeats, not a duration
	downloadURL          string
	checksumsURL         string // a release's checksums file, {version}
	signatureURL         string // an archive's minisign signature
	packageName          string
	drainTimeout         time.Duration
	wsPing               time.Duration // 0 = off
	firstMessageWait     time.Duration
	maxConnsPerSource    int // 0 = no limit
	decodeSlots          int
	agentEndpoint        string // the URL offered with an agent's credential
	agentCAFile          string // PEM offered with the credential
	requireCredential    bool
	rotateAfter          time.Duration // 0 = never
	logLevel             slog.Level
}

// parseOptions reads flags whose defaults come from the environment, so
// that a container sets everything through its task definition.
func parseOptions(args []string, getenv func(string) string) (options, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var o options
	var poll, heartbeat, drainTimeout, wsPing, offlineHeartbeats, level, firstMessageWait, perSource, slots, require, rotate string
	fs := flag.NewFlagSet("opamp-gateway", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.listen, "listen", env("MYRIARCH_GATEWAY_LISTEN", DefaultListen), "OpAMP address")
	fs.StringVar(&o.healthListen, "health-listen", env("MYRIARCH_GATEWAY_HEALTH_LISTEN", DefaultHealthListen), "health check address")
	fs.StringVar(&o.debugListen, "debug-listen", env("MYRIARCH_GATEWAY_DEBUG_LISTEN", ""), "pprof address, loopback only (off when empty)")
	fs.StringVar(&o.tablePrefix, "table-prefix", env("MYRIARCH_TABLE_PREFIX", ""), "DynamoDB table prefix")
	fs.StringVar(&o.tokensFile, "tokens-file", env("MYRIARCH_AGENT_TOKENS_FILE", ""), "file of agent tokens, one a line")
	fs.StringVar(&o.tlsCert, "tls-cert", env("MYRIARCH_GATEWAY_TLS_CERT", ""), "TLS certificate (PEM)")
	fs.StringVar(&o.tlsKey, "tls-key", env("MYRIARCH_GATEWAY_TLS_KEY", ""), "TLS key (PEM)")
	fs.StringVar(&poll, "poll-interval", env("MYRIARCH_GATEWAY_POLL_INTERVAL", "1s"), "lagging index poll interval")
	fs.StringVar(&heartbeat, "heartbeat", env("MYRIARCH_GATEWAY_HEARTBEAT", "30s"), "agent heartbeat interval")
	fs.StringVar(&offlineHeartbeats, "offline-after", env("MYRIARCH_GATEWAY_OFFLINE_AFTER", "3"), "a count of heartbeats: how many of silence make an agent offline (not a duration)")
	fs.StringVar(&o.downloadURL, "download-url", env("MYRIARCH_GATEWAY_DOWNLOAD_URL", gateway.DefaultDownloadURL), "package URL template with {version}")
	fs.StringVar(&o.checksumsURL, "package-checksums-url", env("MYRIARCH_GATEWAY_PACKAGE_CHECKSUMS_URL", ""), "checksums file URL template with {version}, offered to updaters")
	fs.StringVar(&o.signatureURL, "package-signature-url", env("MYRIARCH_GATEWAY_PACKAGE_SIGNATURE_URL", ""), "minisign signature URL template, offered to updaters")
	fs.StringVar(&o.packageName, "package-name", env("MYRIARCH_GATEWAY_PACKAGE_NAME", ""), "OpAMP package name of the collector")
	fs.StringVar(&drainTimeout, "drain-timeout", env("MYRIARCH_GATEWAY_DRAIN_TIMEOUT", "20s"), "how long a shutdown waits for connections to close")
	fs.StringVar(&wsPing, "ws-ping", env("MYRIARCH_GATEWAY_WS_PING", gateway.DefaultWSPing.String()), "quiet after which a WebSocket connection is pinged, under the load balancer's 350 s idle timeout (0 = off)")
	fs.StringVar(&firstMessageWait, "first-message-wait", env("MYRIARCH_GATEWAY_FIRST_MESSAGE_WAIT", "10s"), "close a WebSocket that sends no message this long after connecting")
	fs.StringVar(&perSource, "max-conns-per-source", env("MYRIARCH_GATEWAY_MAX_CONNS_PER_SOURCE", strconv.Itoa(DefaultMaxConnsPerSource)), "WebSocket connections of one source address (0 = no limit)")
	fs.StringVar(&slots, "decode-slots", env("MYRIARCH_GATEWAY_DECODE_SLOTS", strconv.Itoa(gateway.DefaultDecodeSlots)), "messages over 16 KiB read and handled at once")
	fs.StringVar(&o.agentEndpoint, "agent-endpoint", env("MYRIARCH_GATEWAY_AGENT_ENDPOINT", ""), "OpAMP URL offered with an agent's credential (wss://…/v1/opamp; empty: the request's)")
	fs.StringVar(&o.agentCAFile, "agent-ca-file", env("MYRIARCH_GATEWAY_AGENT_CA_FILE", ""), "PEM of the CA offered with an agent's credential")
	fs.StringVar(&require, "require-agent-credential", env("MYRIARCH_GATEWAY_REQUIRE_AGENT_CREDENTIAL", "false"), "refuse agents that cannot take a credential")
	fs.StringVar(&rotate, "credential-rotate-after", env("MYRIARCH_GATEWAY_CREDENTIAL_ROTATE_AFTER", "0"), "offer a new credential to an agent whose credential is older (0 = never)")
	fs.StringVar(&level, "log-level", env("MYRIARCH_LOG_LEVEL", "info"), "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.tokensEnv = getenv("MYRIARCH_AGENT_TOKENS")
	var errs []error
	o.pollInterval = positiveDuration("poll-interval", poll, &errs)
	o.heartbeat = positiveDuration("heartbeat", heartbeat, &errs)
	o.drainTimeout = positiveDuration("drain-timeout", drainTimeout, &errs)
	o.firstMessageWait = positiveDuration("first-message-wait", firstMessageWait, &errs)
	o.maxConnsPerSource = wholeNumber("max-conns-per-source", perSource, 0, &errs)
	o.decodeSlots = wholeNumber("decode-slots", slots, 1, &errs)
	if b, err := strconv.ParseBool(require); err != nil {
		errs = append(errs, fmt.Errorf("-require-agent-credential %q: want true or false", require))
	} else {
		o.requireCredential = b
	}
	if d, err := time.ParseDuration(rotate); err != nil || d < 0 {
		errs = append(errs, fmt.Errorf("-credential-rotate-after %q: want a duration such as 720h, or 0 for never", rotate))
	} else {
		o.rotateAfter = d
	}
	if o.agentEndpoint != "" && !strings.HasPrefix(o.agentEndpoint, "wss://") && !strings.HasPrefix(o.agentEndpoint, "ws://") &&
		!strings.HasPrefix(o.agentEndpoint, "https://") && !strings.HasPrefix(o.agentEndpoint, "http://") {
		errs = append(errs, fmt.Errorf("-agent-endpoint %q: want an OpAMP URL such as wss://opamp.example.com/v1/opamp", o.agentEndpoint))
	}
	if d, err := time.ParseDuration(wsPing); err != nil || d < 0 {
		errs = append(errs, fmt.Errorf("-ws-ping %q: want a duration such as 60s, or 0 for none", wsPing))
	} else {
		o.wsPing = d
	}
	if n, err := strconv.Atoi(offlineHeartbeats); err != nil || n < 2 {
		errs = append(errs, fmt.Errorf("-offline-after %q: want a whole number (of heartbeats) of at least 2", offlineHeartbeats))
	} else {
		o.offlineHeartbeats = n
	}
	if err := o.logLevel.UnmarshalText([]byte(level)); err != nil {
		errs = append(errs, fmt.Errorf("-log-level %q: %w", level, err))
	}
	if err := checkDebugListen(o.debugListen); err != nil {
		errs = append(errs, err)
	}
	if o.tablePrefix == "" {
		errs = append(errs, errors.New("-table-prefix (MYRIARCH_TABLE_PREFIX) is required"))
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		errs = append(errs, errors.New("-tls-cert and -tls-key go together"))
	}
	if !strings.Contains(o.downloadURL, "{version}") {
		errs = append(errs, fmt.Errorf("-download-url %q has no {version}", o.downloadURL))
	}
	for flag, u := range map[string]string{"-package-checksums-url": o.checksumsURL, "-package-signature-url": o.signatureURL} {
		if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			errs = append(errs, fmt.Errorf("%s %q: want an http(s) URL template", flag, u))
		}
	}
	if o.tokensEnv == "" && o.tokensFile == "" {
		errs = append(errs, errors.New("no agent tokens: set MYRIARCH_AGENT_TOKENS or -tokens-file"))
	}
	return o, errors.Join(errs...)
}

func positiveDuration(name, v string, errs *[]error) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		*errs = append(*errs, fmt.Errorf("-%s %q: want a positive duration such as 30s", name, v))
	}
	return d
}

func wholeNumber(name, v string, least int, errs *[]error) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		*errs = append(*errs, fmt.Errorf("-%s %q: want a whole number of at least %d", name, v, least))
	}
	return n
}

// DefaultMaxConnsPerSource is -max-conns-per-source unless set: far more
// agents than one host runs, far fewer than a task holds. It counts the
// address the gateway sees: behind a load balancer that does not pass the
// agents' own addresses on, that is the balancer's.
const DefaultMaxConnsPerSource = 1000

// loadTokens is the union of the tokens in the environment and in the file
// (blank lines and lines starting with # are skipped).
func (o options) loadTokens() ([]string, error) {
	var tokens []string
	for _, t := range strings.Split(o.tokensEnv, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tokens = append(tokens, t)
		}
	}
	if o.tokensFile != "" {
		b, err := os.ReadFile(o.tokensFile)
		if err != nil {
			return nil, fmt.Errorf("read agent tokens: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				tokens = append(tokens, t)
			}
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("no agent tokens configured")
	}
	return tokens, nil
}
