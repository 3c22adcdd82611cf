package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client is the demo's view of the REST API: JSON in and out with the
// admin's bearer token. A problem answer becomes an error with its code.
type client struct {
	base, token string
	http        *http.Client
}

func (c client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.http
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(data, &p)
		return fmt.Errorf("%s %s: %d %s: %s", method, path, res.StatusCode, p.Code, p.Detail)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// rolloutView is the part of the API's Rollout the demo shows.
type rolloutView struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	StatusReason string `json:"statusReason"`
	ToRef        string `json:"toRef"`
	Origin       string `json:"origin"`
	Waves        []struct {
		Name         string         `json:"name"`
		Status       string         `json:"status"`
		Total        int            `json:"total"`
		Counts       map[string]int `json:"counts"`
		InHealthWait int            `json:"inHealthWait"`
	} `json:"waves"`
	TargetCounts map[string]int `json:"targetCounts"`
	Progress     string         `json:"progress"`
	Stages       []struct {
		Name    string `json:"name"`
		Status  string `json:"status"`
		LastRed string `json:"lastRed"`
		Gate    *struct {
			Readings       int `json:"readings"`
			ConsecutiveRed int `json:"consecutiveRed"`
		} `json:"gate"`
	} `json:"stages"`
}

// line is one progress line of a rollout.
func (r rolloutView) line() string {
	s := fmt.Sprintf("%s %s → %s: %s", r.Kind, r.ID, short(r.ToRef), r.Status)
	for _, w := range r.Waves {
		s += fmt.Sprintf(" | %s %s %d/%d", w.Name, w.Status, w.Counts["succeeded"], w.Total)
		if w.InHealthWait > 0 {
			s += fmt.Sprintf(" (%d in health wait)", w.InHealthWait)
		}
	}
	if r.Progress != "" {
		s += " | stages " + r.Progress
		for _, st := range r.Stages {
			if st.Status == "running" || st.Status == "baking" || st.Status == "failed" || st.Status == "frozen" {
				s += fmt.Sprintf(" (%s %s", st.Name, st.Status)
				if g := st.Gate; g != nil && st.Status == "baking" {
					s += fmt.Sprintf(", gate: %d readings, %d red", g.Readings, g.ConsecutiveRed)
				}
				s += ")"
				break
			}
		}
	}
	if r.StatusReason != "" && r.Status != "completed" {
		s += " — " + r.StatusReason
	}
	return s
}

func short(ref string) string {
	if len(ref) > 12 {
		return ref[:12]
	}
	return ref
}
