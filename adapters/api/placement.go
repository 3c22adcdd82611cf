package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// Where the targets of a rollout in stages sit, as the API shows it: each
// target names its stage and pass, the targets route filters by stage, and
// each pass of the detail lists its first agents and the regions and zones
// its gate queries. The rollout stores only indexes (a target's stage, pass
// and batch) and per pass counts; the names come from the rollout's stages.

// maxStageNameChars bounds the stage name quoted back in a refusal.
const maxStageNameChars = 64

// withPlacement names the stage and pass of t and gives its batch; a
// rollout without stages leaves the fields absent.
func withPlacement(v *targetView, r rollout.Rollout, t rollout.Target) {
	if t.Stage < 0 || t.Stage >= len(r.Stages) {
		return
	}
	st := r.Stages[t.Stage]
	if t.Pass < 0 || t.Pass >= len(st.Passes) {
		return
	}
	batch := t.Batch
	v.Stage, v.Pass, v.Batch = st.Name, st.Passes[t.Pass].Name, &batch
}

// stageFilter is ?stage=<name> resolved against a rollout: the indexes of
// its stages of that name (one: names are unique) and the wave they belong
// to, which narrows the store's read.
type stageFilter struct {
	stages map[int]bool
	wave   int
}

func (f stageFilter) keeps(t rollout.Target) bool { return f.stages[t.Stage] }

// resolveStage finds the stage named name. A name the rollout does not
// have is a 400 request_invalid that names it and lists the rollout's
// stages, rather than an empty page that would look like a stage without
// targets.
func resolveStage(r rollout.Rollout, name string) (stageFilter, *Problem) {
	f := stageFilter{stages: map[int]bool{}, wave: rollout.AllWaves}
	waves := map[int]bool{}
	names := make([]string, len(r.Stages))
	for i, st := range r.Stages {
		names[i] = st.Name
		if st.Name == name {
			f.stages[i], waves[st.Wave] = true, true
		}
	}
	if len(f.stages) == 0 {
		return f, unknownStage(r, name, names)
	}
	if len(waves) == 1 {
		for w := range waves {
			f.wave = w
		}
	}
	return f, nil
}

func unknownStage(r rollout.Rollout, name string, names []string) *Problem {
	detail := fmt.Sprintf("rollout %s has no stage named %q; ", r.ID, clip(name, maxStageNameChars))
	if len(names) == 0 {
		return badRequest("%sit has no stages: its waves run whole", detail)
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	p := problem(http.StatusBadRequest, CodeRequestInvalid, detail+"its stages are "+strings.Join(quoted, ", "))
	p.Stages = names
	return p
}

// passAgents lists per pass the ids of its agents in batch order, then by
// id, at most schema.MaxPassAgents: those of its first batches. It keeps
// only batch and id of each target, not the target: a rollout may have
// 100,000.
func passAgents(ts []rollout.Target) map[engine.PassKey][]string {
	type member struct {
		batch int
		id    string
	}
	byPass := map[engine.PassKey][]member{}
	for _, t := range ts {
		k := engine.PassKey{Stage: t.Stage, Pass: t.Pass}
		byPass[k] = append(byPass[k], member{t.Batch, t.AgentID})
	}
	out := make(map[engine.PassKey][]string, len(byPass))
	for k, ms := range byPass {
		slices.SortFunc(ms, func(a, b member) int {
			if a.batch != b.batch {
				return a.batch - b.batch
			}
			return strings.Compare(a.id, b.id)
		})
		ids := make([]string, min(len(ms), schema.MaxPassAgents))
		for i := range ids {
			ids[i] = ms[i].id
		}
		out[k] = ids
	}
	return out
}

// scopedByAgents lists the passes whose region or zone comes from their
// agents: a pass that is not split has neither of its own, a pass split by
// region no zone.
func scopedByAgents(r rollout.Rollout) map[engine.PassKey]bool {
	out := map[engine.PassKey]bool{}
	for s, st := range r.Stages {
		for p, ps := range st.Passes {
			if ps.Region == "" || ps.Zone == "" {
				out[engine.PassKey{Stage: s, Pass: p}] = true
			}
		}
	}
	return out
}

// withPassScopes sets the regions and zones of every pass of the view.
func withPassScopes(v *rolloutView, scopes map[engine.PassKey]engine.PassScope) {
	for s := range v.Stages {
		for p := range v.Stages[s].Passes {
			sc := scopes[engine.PassKey{Stage: s, Pass: p}]
			v.Stages[s].Passes[p].Regions, v.Stages[s].Passes[p].Zones = sc.Regions, sc.Zones
		}
	}
}
