package enginetask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// GateReader performs one reading of a gate (gateread.Reader).
type GateReader interface {
	Read(ctx context.Context, h policy.Health, req gate.Request) []gate.Result
}

// GateReading is what the "Reading gates" state shows in the execution
// history, one per gate read.
type GateReading struct {
	Stage   string `json:"stage"`
	Batch   *int   `json:"batch,omitempty"` // a batch gate
	Red     bool   `json:"red"`
	Checked int    `json:"checked"`
	Summary string `json:"summary"` // the first blocking red result, or "green"
}

// ReadGates reads every gate of the rollout that is due, then records the
// readings on the rollout. The readings are taken once: a lost race
// re-reads the rollout and records them again where the gate is still due
// at the same moment, and a retried task finds the gate's next reading
// moved on and reads nothing twice.
func (p Evaluator) ReadGates(ctx context.Context, rolloutID string) ([]GateReading, error) {
	in, err := p.load(ctx, rolloutID)
	if err != nil {
		return nil, err
	}
	h := in.Rollout.Policy.Health
	due := engine.DueGates(in.Rollout, in.Now)
	type taken struct {
		due     engine.GateDue
		dueAt   time.Time
		results []gate.Result
	}
	var all []taken
	var shown []GateReading
	for _, d := range due {
		g := engine.GateState(in.Rollout, d)
		req := engine.GateRequest(in, d)
		var results []gate.Result
		if h != nil {
			results = p.readOne(ctx, *h, req)
		}
		all = append(all, taken{due: d, dueAt: *g.NextAt, results: results})
		shown = append(shown, summarize(in.Rollout, d, results))
	}
	if len(all) == 0 {
		return nil, nil
	}
	at := p.Clock().UTC()
	for attempt := 0; attempt < passAttempts; attempt++ {
		r, err := p.Store.GetRollout(ctx, rolloutID)
		if err != nil {
			return nil, fmt.Errorf("load rollout %s: %w", rolloutID, err)
		}
		changed := false
		for _, t := range all {
			changed = engine.RecordReading(&r, t.due, t.dueAt, at, t.results) || changed
		}
		if !changed {
			return shown, nil
		}
		err = p.Store.SaveEvaluation(ctx, r, nil)
		if err == nil {
			for _, s := range shown {
				p.logger().Info("gate reading", "rollout", r.ID, "fleet", r.Fleet, "stage", s.Stage, "red", s.Red, "checked", s.Checked, "summary", s.Summary)
			}
			return shown, nil
		}
		if !errors.Is(err, rollout.ErrConflict) {
			return nil, fmt.Errorf("record gate readings of rollout %s: %w", rolloutID, err)
		}
	}
	return nil, fmt.Errorf("record gate readings of rollout %s: %w", rolloutID, rollout.ErrConflict)
}

// readOne reads one gate. A target without the host attribute cannot be
// probed: that is a red result with an error, not a silent pass.
func (p Evaluator) readOne(ctx context.Context, h policy.Health, req gate.Request) []gate.Result {
	var missing []gate.Result
	hosts := req.Hosts[:0:0]
	for _, host := range req.Hosts {
		if host.Host != "" {
			hosts = append(hosts, host)
			continue
		}
		for _, pr := range h.Probes {
			missing = append(missing, gate.Result{Kind: gate.KindProbe, Name: pr.URL, Scope: host.AgentID, Red: true, DryRun: pr.DryRun,
				Error: "the agent reports no host attribute to probe (policy topology.hostAttribute)"})
		}
	}
	req.Hosts = hosts
	if p.Gates == nil {
		return append(missing, gate.Result{Kind: gate.KindProbe, Name: "gates", Red: true, Error: "this engine has no gate reader configured"})
	}
	return append(missing, p.Gates.Read(ctx, h, req)...)
}

func summarize(r rollout.Rollout, d engine.GateDue, results []gate.Result) GateReading {
	st := r.Stages[d.Stage]
	out := GateReading{Stage: st.Name, Checked: len(results), Summary: "green"}
	if d.Pass != engine.StageGate {
		b := st.Passes[d.Pass].Gate.Batch
		out.Batch = &b
		out.Stage = st.Passes[d.Pass].Name
	}
	for _, res := range results {
		if res.Blocking() {
			out.Red, out.Summary = true, res.String()
			break
		}
	}
	return out
}
