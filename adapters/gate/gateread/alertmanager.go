package gateread

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/gate"
)

// Alertmanager is read by hand with net/http: the one request and the three
// fields it needs do not justify the alertmanager module, which would bring
// the server's whole dependency tree (clustering, storage, UI) into every
// binary that reads a gate.

// alertsBodyLimit bounds the alerts read from Alertmanager: thousands of
// alerts fit; a bigger answer is an error, not a reason to use the memory.
const alertsBodyLimit = 16 << 20

// amAlert is what the gate reads of a gettableAlert of the v2 API.
type amAlert struct {
	Labels map[string]string `json:"labels"`
	Status struct {
		State string `json:"state"` // unprocessed, active, suppressed
	} `json:"status"`
	StartsAt time.Time `json:"startsAt"`
}

// readAlertmanager asks for the active alerts that are neither silenced nor
// inhibited and turns the stage red when one concerns it (ConcernsStage).
func (r Reader) readAlertmanager(ctx context.Context, base gate.Result, blockOn []string, req gate.Request) gate.Result {
	matchers, err := gate.ParseMatchers(blockOn)
	if err != nil {
		return failed(base, "blockOn: "+err.Error())
	}
	alerts, err := r.activeAlerts(ctx)
	if err != nil {
		return failed(base, err.Error())
	}
	regions, zones := gate.StageScope(req.Passes)
	var blocking []amAlert
	for _, a := range alerts {
		// An alert still "unprocessed" has not been matched against the
		// silences yet (that happens after the route's group_wait); until
		// then it is firing, and the gate would rather wait than miss it.
		if a.Status.State != "suppressed" && gate.ConcernsStage(a.Labels, matchers, req.Fleet, regions, zones) {
			blocking = append(blocking, a)
		}
	}
	// The longest-firing alerts are named first: they are the likely cause.
	slices.SortStableFunc(blocking, func(a, b amAlert) int {
		return cmp.Or(a.StartsAt.Compare(b.StartsAt), cmp.Compare(a.Labels["alertname"], b.Labels["alertname"]))
	})
	names := make([]string, len(blocking))
	for i, a := range blocking {
		names[i] = a.Labels["alertname"]
	}
	res := base
	res.Red, res.Detail = len(blocking) > 0, gate.Firing("alert", names)
	return res
}

func (r Reader) activeAlerts(ctx context.Context) ([]amAlert, error) {
	u := strings.TrimSuffix(r.AlertmanagerURL, "/") + "/api/v2/alerts?active=true&silenced=false&inhibited=false"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("alertmanager: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("alertmanager: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, alertsBodyLimit+1))
	if err != nil {
		return nil, fmt.Errorf("alertmanager: read alerts: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("alertmanager: GET /api/v2/alerts: status %d: %.200s", resp.StatusCode, body)
	}
	if len(body) > alertsBodyLimit {
		return nil, fmt.Errorf("alertmanager: alerts larger than %d MiB", alertsBodyLimit>>20)
	}
	var alerts []amAlert
	if err := json.Unmarshal(body, &alerts); err != nil {
		return nil, fmt.Errorf("alertmanager: decode alerts: %w", err)
	}
	return alerts, nil
}
