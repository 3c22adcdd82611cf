package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/executor/secrets"
)

// The functions that call executors read the stage's executor secrets, and
// only those: GetSecretValue on myriarch/<stage>/* and the prefix in their
// environment; no other function may read any secret.
func TestIAM_ExecutorSecrets(t *testing.T) {
	s := synthesized(t, nil)
	policies := s.policies(t)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, fn := s.function(t, f.Name)
			var granted []string
			for _, st := range policies[roleOf(fn, "Role")] {
				for _, a := range st.actions {
					if strings.HasPrefix(a, "secretsmanager:") {
						res, _ := json.Marshal(st.resources)
						granted = append(granted, a+" on "+string(res))
					}
				}
			}
			env, _ := json.Marshal(fn.Properties["Environment"])
			hasPrefix := strings.Contains(string(env), `"`+secrets.EnvPrefix+`":"myriarch/test/"`)
			switch {
			case !f.ExecutorSecrets && (len(granted) > 0 || hasPrefix):
				t.Fatalf("%s calls no executor but reads secrets: %v (prefix in env: %v)", f.Name, granted, hasPrefix)
			case !f.ExecutorSecrets:
			case len(granted) != 1 || !strings.HasPrefix(granted[0], "secretsmanager:GetSecretValue on ") ||
				!strings.Contains(granted[0], `":secret:myriarch/test/*"`):
				t.Fatalf("grants %v, want GetSecretValue on the stage's prefix only", granted)
			case !hasPrefix:
				t.Fatalf("environment %s lacks %s=myriarch/test/", env, secrets.EnvPrefix)
			}
		})
	}
}
