package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
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
	TargetCounts map[string]int        `json:"targetCounts"`
	Progress     string                `json:"progress"`
	Policy       schema.PolicySnapshot `json:"policy"`
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

// inHealthWait counts the targets of the rollout in their health wait.
func (r rolloutView) inHealthWait() int {
	n := 0
	for _, w := range r.Waves {
		n += w.InHealthWait
	}
	return n
}

// healthWaitLine is the countdown of the health waits in progress: how
// many targets wait and when the last wait ends, from their verifiedAt and
// the policy's healthWait, as the page and myrctl watch count them.
func healthWaitLine(verifiedAt []time.Time, healthWait time.Duration, now time.Time) string {
	if len(verifiedAt) == 0 {
		return ""
	}
	last := verifiedAt[0]
	for _, v := range verifiedAt[1:] {
		if v.After(last) {
			last = v
		}
	}
	left := last.Add(healthWait).Sub(now)
	if left <= 0 {
		return fmt.Sprintf("  health wait: %d %s, finishing…", len(verifiedAt), plural(len(verifiedAt), "target"))
	}
	return fmt.Sprintf("  health wait: %d %s, the last ends in %s", len(verifiedAt), plural(len(verifiedAt), "target"), left.Round(time.Second))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func short(ref string) string {
	if len(ref) > 12 {
		return ref[:12]
	}
	return ref
}
