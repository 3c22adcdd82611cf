package stack

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/myriarch/myriarch/core/predict"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// The accuracy of predictions: rollouts on the stack, each planned through
// POST /api/v1/plans just before its revision is applied, and the
// predicted finish compared with the actual one.

// PredictionCase is one measured rollout: the spec of fleet edge's
// configuration policy (the lines under spec:, given the moment the plan
// is asked, so that a maintenance window can open a minute later) and how
// long the operator takes to approve a wave once it asks (0: at once).
type PredictionCase struct {
	Name         string
	Spec         func(now time.Time) string
	ApproveAfter time.Duration
}

// AccuracyOptions shape a measurement.
type AccuracyOptions struct {
	Revision string   // the quickstart revision directory
	Agents   int      // simulated collectors; agent 1 is the canary
	Speed    float64  // divides the simulated agents' delays
	Zones    []string // "<region>/<zone>" of the agents, round robin (simfleet)
	Cases    []PredictionCase
	Out      io.Writer // a line per step; nil: none
}

// Measurement compares one rollout's predicted finish with the actual one.
// The predicted finishes count from the actual approvals; Error is actual
// minus predicted (positive: later than predicted), Percent it against
// Modelled, the actual duration from the plan to the finish without the
// time the rollout waited for approvals (which the prediction does not
// know).
type Measurement struct {
	Name                   string
	PlannedAt, Actual      time.Time
	Predicted, Pessimistic time.Time
	Apply                  predict.ApplySeconds
	Modelled, Error        time.Duration
	Percent                float64
}

// MeasurePredictions runs the cases on the stack, one after the other,
// after a first rollout that gives the fleet a history of apply times.
func (s *Stack) MeasurePredictions(ctx context.Context, o AccuracyOptions) ([]Measurement, error) {
	say := func(format string, args ...any) {
		if o.Out != nil {
			fmt.Fprintf(o.Out, format+"\n", args...)
		}
	}
	c, op := client{base: s.APIURL, token: s.AdminToken}, client{base: s.APIURL, token: s.OperatorToken}
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.CanaryCount = o.Agents, s.GatewayURL, s.AgentToken, o.Speed, 1
	cfg.Zones = o.Zones
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start the simulated fleet: %w", err)
	}
	defer func() { _ = fleet.Stop() }()
	if err := s.waitAgents(ctx, o.Agents); err != nil {
		return nil, err
	}
	files, err := revision.ReadDir(o.Revision)
	if err != nil {
		return nil, err
	}
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: measured", 1))
	files["policies/measured.yaml"] = []byte(measuredPolicy("  waves: [{name: all, percent: 100}]\n  maxConcurrent: 0\n  healthWait: 1s\n"))
	if err := s.apply(ctx, c, files, "measure-0"); err != nil {
		return nil, err
	}
	hash := revision.Hash(files["configs/edge.yaml"])
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == hash && a.Healthy })); err != nil {
		return nil, fmt.Errorf("agents never ran the bootstrapped configuration: %w", err)
	}
	m := measurer{s: s, c: c, op: op, files: files, say: say}
	if _, err := m.rollout(ctx, "history", "measure-1", PredictionCase{}); err != nil {
		return nil, err
	}
	say("history: %d targets of one rollout", o.Agents)
	var out []Measurement
	for i, pc := range o.Cases {
		files["policies/measured.yaml"] = []byte(measuredPolicy(pc.Spec(s.clock())))
		meas, err := m.rollout(ctx, pc.Name, fmt.Sprintf("measure-%d", i+2), pc)
		if err != nil {
			return out, fmt.Errorf("case %s: %w", pc.Name, err)
		}
		say("%s: predicted %s (pessimistic %s), actual %s: error %+.1fs (%+.1f%% of %s), %.1fs before the pessimistic finish", meas.Name,
			meas.Predicted.Format(time.TimeOnly+".0"), meas.Pessimistic.Format(time.TimeOnly+".0"), meas.Actual.Format(time.TimeOnly+".0"),
			meas.Error.Seconds(), meas.Percent, meas.Modelled.Round(100*time.Millisecond), meas.Pessimistic.Sub(meas.Actual).Seconds())
		out = append(out, meas)
	}
	return out, nil
}

func measuredPolicy(spec string) string {
	return "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: measured}\nspec:\n" + spec
}

type measurer struct {
	s     *Stack
	c, op client
	files map[string][]byte
	say   func(string, ...any)
}

// rollout changes the configuration, plans it, applies it, approves what
// waits for approval after pc.ApproveAfter, and compares the finish.
func (m measurer) rollout(ctx context.Context, name, commit string, pc PredictionCase) (Measurement, error) {
	m.files["configs/edge.yaml"] = append(append([]byte(nil), m.files["configs/edge.yaml"]...), []byte("# "+commit+"\n")...)
	meas := Measurement{Name: name, PlannedAt: m.s.clock()}
	var plan predict.Plan
	body := map[string]any{"fleet": "edge", "kind": "config", "revision": map[string]any{"commit": commit, "files": textFiles(m.files)}}
	if err := m.c.do(ctx, "POST", "/api/v1/plans", body, &plan); err != nil {
		return meas, err
	}
	if !plan.Planned || plan.Prediction == nil || !plan.Prediction.Complete {
		return meas, fmt.Errorf("the plan predicts no finish: %s %+v", plan.Note, plan.Prediction)
	}
	meas.Apply = plan.Prediction.ApplySeconds
	id, err := m.s.applyForRollout(ctx, m.c, m.files, commit)
	if err != nil {
		return meas, err
	}
	approved := map[int]time.Time{}
	var waited time.Duration
	for {
		var r struct {
			Status     string     `json:"status"`
			Reason     string     `json:"statusReason"`
			FinishedAt *time.Time `json:"finishedAt"`
			Waves      []struct {
				Index        int        `json:"index"`
				Status       string     `json:"status"`
				WaitingSince *time.Time `json:"waitingSince"`
			} `json:"waves"`
		}
		if err := m.c.do(ctx, "GET", "/api/v1/rollouts/"+id, nil, &r); err != nil {
			return meas, err
		}
		switch r.Status {
		case "completed":
			meas.Actual = *r.FinishedAt
			return meas.compare(plan.Prediction, approved, waited)
		case "waiting_approval":
			for _, w := range r.Waves {
				if w.Status != "waiting_approval" || w.WaitingSince == nil {
					continue
				}
				if err := sleep(ctx, time.Until(w.WaitingSince.Add(pc.ApproveAfter))); err != nil {
					return meas, err
				}
				if err := m.op.do(ctx, "POST", "/api/v1/rollouts/"+id+"/actions/approve", map[string]int{"wave": w.Index}, nil); err != nil {
					return meas, err
				}
				approved[w.Index] = m.s.clock()
				waited += approved[w.Index].Sub(*w.WaitingSince)
				m.say("%s: wave %d approved %s after it asked", name, w.Index, approved[w.Index].Sub(*w.WaitingSince).Round(100*time.Millisecond))
			}
		case "running", "pending", "frozen":
		default:
			return meas, fmt.Errorf("rollout %s is %s: %s", id, r.Status, r.Reason)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return meas, fmt.Errorf("rollout %s did not complete: %w", id, err)
		}
	}
}

// compare resolves the predicted finishes with the actual approvals.
func (meas Measurement) compare(pr *predict.Prediction, approved map[int]time.Time, waited time.Duration) (Measurement, error) {
	var ok bool
	if meas.Predicted, ok = pr.Finish.Resolve(approved); !ok {
		return meas, fmt.Errorf("the predicted finish counts from an approval that was not given: %+v", pr.Finish)
	}
	meas.Pessimistic, _ = pr.FinishPessimistic.Resolve(approved)
	meas.Error = meas.Actual.Sub(meas.Predicted)
	meas.Modelled = meas.Actual.Sub(meas.PlannedAt) - waited
	if meas.Modelled > 0 {
		meas.Percent = 100 * meas.Error.Seconds() / meas.Modelled.Seconds()
	}
	return meas, nil
}
