package fleet

import "testing"

// base is a valid fleet with an enabled frame.
func base() Fleet {
	return Fleet{
		Name:      "edge-gateway",
		Collector: Collector{Version: "0.161.0"},
		Update:    Update{Executor: ExecutorUpdater, Selection: Frame{Enabled: true, VersionRange: ">=0.161.0, <=0.162.0"}},
		Rollout:   RolloutPolicies{VersionPolicy: "gateway-version"},
	}
}

func TestValidate_NilPolicyExistsSkipsPolicyChecks(t *testing.T) {
	f := base()
	f.Rollout.VersionPolicy = "anything"
	if got := Validate(f, nil); len(got) != 0 {
		t.Errorf("Validate(nil) = %v, want no policy issue", got)
	}
}

// The misspelled key is reported by Parse; Validate then sees a frame with
// neither field, which is the second finding the operator gets.
func TestParseValidate_MisspelledVersionRange(t *testing.T) {
	f, parsed := Parse([]byte(head + "spec: {update: {executor: updater, selection: {enabled: true, versionrange: '>=0.1.0'}}}"))
	got := append(parsed, Validate(f, nil)...)
	if len(got.WithCode("unknown_field")) != 1 || len(got.WithCode("selection_invalid")) != 1 {
		t.Errorf("issues = %v, want unknown_field and selection_invalid", got)
	}
}
