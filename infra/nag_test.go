package main

import "testing"

// cdk-nag's AwsSolutions rules hold in every configuration the tests
// synthesize, but for the findings nag.go suppresses with their reasons:
// a new resource that breaks one fails here (and cdk synth) until it is
// fixed or its suppression says why it does not apply.
func TestNag_NoUnsuppressedFindings(t *testing.T) {
	for _, ctx := range contexts {
		s := synthesized(t, ctx)
		for _, f := range s.nag {
			t.Errorf("context %v: %s", ctx, f)
		}
	}
}
