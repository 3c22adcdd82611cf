package iam

import (
	"encoding/json"
	"fmt"
)

// evaluatedOnResource are the actions that the Service Authorization
// Reference lists with no resource type (so iam-simulate, which follows
// it, evaluates them on "*" only), yet which the service evaluates on a
// resource all the same: Step Functions' task responses, on the state
// machine whose execution issued the token. AWS's AccessDenied names
// "resource: arn:aws:states:…:stateMachine:<name>", and a grant on that
// ARN is enough (aws-cdk#8486 tested it).
var evaluatedOnResource = map[string]bool{
	"states:SendTaskSuccess": true, "states:SendTaskFailure": true, "states:SendTaskHeartbeat": true,
}

// narrowedTo asks the evaluator as the service decides for those actions:
// each policy keeps the statements whose Resource matches resource (or
// whose NotResource does not), with Resource "*", so that the evaluation
// on "*" is the evaluation on resource. Everything else of a statement
// (Effect, Action, Condition) is kept as it is.
func narrowedTo(policies []json.RawMessage, resource string) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(policies))
	for _, p := range policies {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(p, &doc); err != nil {
			return nil, fmt.Errorf("a policy: %w", err)
		}
		var sts statementsRaw
		if err := json.Unmarshal(doc["Statement"], &sts); err != nil {
			return nil, fmt.Errorf("a policy's statements: %w", err)
		}
		var kept []map[string]json.RawMessage
		for _, st := range sts {
			var res, not stringList
			if v, ok := st["Resource"]; ok {
				if err := json.Unmarshal(v, &res); err != nil {
					return nil, err
				}
			}
			if v, ok := st["NotResource"]; ok {
				if err := json.Unmarshal(v, &not); err != nil {
					return nil, err
				}
			}
			applies := anyMatch(res, resource, false) || (len(not) > 0 && !anyMatch(not, resource, false))
			if !applies {
				continue
			}
			delete(st, "NotResource")
			st["Resource"] = json.RawMessage(`"*"`)
			kept = append(kept, st)
		}
		if len(kept) == 0 {
			continue
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		doc["Statement"] = b
		nb, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, nb)
	}
	return out, nil
}

// statementsRaw reads Statement, one statement or a list, field by field.
type statementsRaw []map[string]json.RawMessage

func (s *statementsRaw) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var one map[string]json.RawMessage
		err := json.Unmarshal(b, &one)
		*s = statementsRaw{one}
		return err
	}
	var many []map[string]json.RawMessage
	err := json.Unmarshal(b, &many)
	*s = many
	return err
}
