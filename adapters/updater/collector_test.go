package updater

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The health check tries until a 200 within its timeout, on the clock it
// is given; then the version command must name the version.
func TestHTTPHealth(t *testing.T) {
	tests := []struct {
		name     string
		okAfter  int32 // tries answered 503 first
		version  []string
		text     string // in the error; "" for none
		maxTries int32
	}{
		{name: "healthy at once", maxTries: 1},
		{name: "healthy after 5 tries", okAfter: 5, maxTries: 6},
		{name: "never within the timeout", okAfter: 1000, text: "not healthy within 1m0s", maxTries: 61}, // 0 s, 1 s, …, 60 s
		{name: "version named", version: []string{"echo", "otelcol-contrib version 0.150.0"}, maxTries: 1},
		{name: "old version runs", version: []string{"echo", "otelcol-contrib version 0.149.0"}, text: "does not name 0.150.0", maxTries: 1},
		{name: "version command fails", version: []string{"false"}, text: "version command: false", maxTries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tries atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tries.Add(1) <= tt.okAfter {
					http.Error(w, `{"status":"StatusStarting"}`, http.StatusServiceUnavailable)
				}
			}))
			defer srv.Close()
			h := HTTPHealth{URL: srv.URL, Timeout: time.Minute, Interval: time.Second, VersionCommand: tt.version, Client: srv.Client(), Clock: newClock()}
			err := h.Check(context.Background(), "0.150.0")
			if tt.text == "" && err != nil || tt.text != "" && (err == nil || !strings.Contains(err.Error(), tt.text)) {
				t.Fatalf("err %v, want %q", err, tt.text)
			}
			if tries.Load() != tt.maxTries {
				t.Errorf("%d tries, want %d", tries.Load(), tt.maxTries)
			}
		})
	}
}

func TestCommand_Restart(t *testing.T) {
	if err := (Command{"true"}).Restart(context.Background()); err != nil {
		t.Errorf("true: %v", err)
	}
	err := Command{"sh", "-c", "echo Job for otelcol.service failed >&2; exit 1"}.Restart(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Job for otelcol.service failed") {
		t.Errorf("a failed restart says %v, want its output", err)
	}
	if err := (Command{}).Restart(context.Background()); err == nil {
		t.Error("an empty command restarted")
	}
}
