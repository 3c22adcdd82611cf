package updater

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// Restarter restarts the collector's service, so that it runs what current
// points to.
type Restarter interface {
	Restart(ctx context.Context) error
}

// HealthChecker tells whether the collector runs version and is healthy.
type HealthChecker interface {
	Check(ctx context.Context, version string) error
}

// commandTimeout bounds a restart or version command: systemd's own stop
// timeout is 90 s by default, and a command that hangs must not hold the
// attempt forever.
const commandTimeout = 2 * time.Minute

// Command restarts by running an argv, such as
// ["systemctl", "restart", "otelcol-contrib"].
type Command []string

var _ Restarter = Command(nil)

func (c Command) Restart(ctx context.Context) error {
	_, err := run(ctx, c)
	return err
}

// run runs argv and returns its output; a failure carries the output's end,
// which says why.
func run(ctx context.Context, argv []string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("no command")
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, tail(out.String(), 512))
	}
	return out.String(), nil
}

// tail is the last n bytes of s, trimmed, for an error message.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// HTTPHealth checks the collector's health endpoint (the health_check
// extension) until it answers 200, within Timeout, pausing Interval between
// tries; then, when VersionCommand is set, that its output names the
// version, so that a collector still running the old binary does not pass.
type HTTPHealth struct {
	URL            string
	Timeout        time.Duration
	Interval       time.Duration
	VersionCommand []string
	Client         *http.Client
	Clock          Clock
}

var _ HealthChecker = HTTPHealth{}

// Check waits for a 200 until the deadline start + Timeout; example: start
// 12:00:00, Timeout 60 s → a last try at or after 12:01:00, then failed.
func (h HTTPHealth) Check(ctx context.Context, version string) error {
	deadline := h.Clock.Now().Add(h.Timeout)
	for {
		err := h.probe(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !h.Clock.Now().Before(deadline) {
			return fmt.Errorf("not healthy within %s: %w", h.Timeout, err)
		}
		if err := sleep(ctx, h.Clock, h.Interval); err != nil {
			return err
		}
	}
	if len(h.VersionCommand) == 0 {
		return nil
	}
	out, err := run(ctx, h.VersionCommand)
	if err != nil {
		return fmt.Errorf("version command: %w", err)
	}
	if !strings.Contains(out, version) {
		return fmt.Errorf("version command: output %q does not name %s", tail(out, 200), version)
	}
	return nil
}

func (h HTTPHealth) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return err
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", h.URL, resp.Status, tail(string(body), 200))
	}
	return nil
}
