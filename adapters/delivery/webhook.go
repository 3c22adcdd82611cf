package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/core/notify"
)

// EnvWebhook names the URL the local stack POSTs every notification to.
const EnvWebhook = "MYRIARCH_EVENTS_WEBHOOK"

// Webhook POSTs each notification as JSON (its EventBridge envelope,
// notify.Envelope) to URL, with the headers X-Myriarch-Event-Id and
// X-Myriarch-Event-Type. A call that fails (no answer, 408, 429 or 5xx)
// is retried Attempts times with a doubling pause from Backoff; a receiver
// that is down or refuses loses the event, with a warning in the log, and
// delivery goes on: the feed keeps every event, and the engine, which only
// writes the outbox, never waits for a webhook.
type Webhook struct {
	URL      string
	Client   *http.Client  // nil: one with a 10 s timeout
	Attempts int           // 0: 4
	Backoff  time.Duration // 0: 500ms (then 1s, 2s)
	Log      *slog.Logger
}

// Publish posts es one after the other.
func (w Webhook) Publish(ctx context.Context, es []notify.Event) (int, error) {
	for i, e := range es {
		if err := w.post(ctx, e); err != nil {
			if ctx.Err() != nil {
				return i, ctx.Err()
			}
			w.log().Warn("webhook: event given up", "url", w.URL, "eventId", e.EventID, "error", err.Error())
		}
	}
	return len(es), nil
}

func (w Webhook) post(ctx context.Context, e notify.Event) error {
	body, err := json.Marshal(notify.Wrap(e))
	if err != nil {
		return err
	}
	attempts, pause := w.Attempts, w.Backoff
	if attempts <= 0 {
		attempts = 4
	}
	if pause <= 0 {
		pause = 500 * time.Millisecond
	}
	var last error
	for a := 0; a < attempts; a++ {
		if a > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
			pause *= 2
		}
		retry, err := w.call(ctx, e, body)
		if err == nil || !retry {
			return err
		}
		last = err
	}
	return fmt.Errorf("after %d attempts: %w", attempts, last)
}

// call posts once; retry tells whether another attempt may succeed.
func (w Webhook) call(ctx context.Context, e notify.Event, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "myriarch-notifications")
	req.Header.Set("X-Myriarch-Event-Id", e.EventID)
	req.Header.Set("X-Myriarch-Event-Type", e.Type)
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return true, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return true, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return false, fmt.Errorf("the receiver refused the event: %s", resp.Status)
}

func (w Webhook) log() *slog.Logger {
	if w.Log == nil {
		return slog.Default()
	}
	return w.Log
}
