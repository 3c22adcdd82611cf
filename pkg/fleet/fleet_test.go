package fleet

import "testing"

func TestPolicyNames(t *testing.T) {
	tests := []struct {
		name                            string
		rollout                         RolloutPolicies
		selectionPolicy                 string
		wantConfig, wantVersion, wantUI string
	}{
		{"nothing set", RolloutPolicies{}, "", "default", "default", "default"},
		{"versionPolicy only", RolloutPolicies{VersionPolicy: "gv"}, "", "default", "gv", "gv"},          // UI falls back to versionPolicy
		{"rolloutPolicy wins for UI", RolloutPolicies{VersionPolicy: "gv"}, "ui", "default", "gv", "ui"}, // Git rollouts keep versionPolicy
		{"rolloutPolicy without versionPolicy", RolloutPolicies{ConfigPolicy: "c"}, "ui", "c", "default", "ui"},
	}
	for _, tt := range tests {
		f := Fleet{Rollout: tt.rollout, Update: Update{Selection: Frame{RolloutPolicy: tt.selectionPolicy}}}
		if got := f.ConfigPolicyName(); got != tt.wantConfig {
			t.Errorf("%s: ConfigPolicyName = %q, want %q", tt.name, got, tt.wantConfig)
		}
		if got := f.VersionPolicyName(); got != tt.wantVersion {
			t.Errorf("%s: VersionPolicyName = %q, want %q", tt.name, got, tt.wantVersion)
		}
		if got := f.SelectionPolicyName(); got != tt.wantUI {
			t.Errorf("%s: SelectionPolicyName = %q, want %q", tt.name, got, tt.wantUI)
		}
	}
}

func TestUpdateExecutorDefaultsToNone(t *testing.T) {
	if got := (Fleet{}).UpdateExecutor(); got != ExecutorNone {
		t.Errorf("UpdateExecutor of a zero fleet = %q, want none", got)
	}
	if got := (Fleet{Update: Update{Executor: ExecutorAWX}}).UpdateExecutor(); got != ExecutorAWX {
		t.Errorf("UpdateExecutor = %q, want awx", got)
	}
}

func TestFrameContains(t *testing.T) {
	rng := Frame{VersionRange: ">=0.161.0, <=0.162.0"}
	preRange := Frame{VersionRange: ">=0.162.0-0"}
	list := Frame{Versions: []string{"0.161.0", "0.163.0-rc.1"}}
	tests := []struct {
		frame       Frame
		version     string
		want, inPre bool
	}{
		{rng, "0.161.0", true, true},                       // lower bound included
		{rng, "0.162.0", true, true},                       // upper bound included
		{rng, "0.160.9", false, false},                     // below
		{rng, "0.163.0", false, false},                     // above
		{rng, "v0.161.0", true, true},                      // normalized first
		{rng, "0.162.0-rc.1", false, true},                 // prerelease refused by a range without prerelease part
		{rng, "0.161", false, false},                       // not strict semver
		{rng, "", false, false},                            // nothing
		{preRange, "0.163.0-rc.1", true, true},             // a range with a prerelease part admits prereleases
		{list, "0.161.0", true, true},                      // exact match
		{list, "0.163.0-rc.1", true, true},                 // a listed prerelease is in
		{list, "0.162.0", false, false},                    // not listed
		{Frame{}, "0.161.0", false, false},                 // declares nothing
		{Frame{VersionRange: "<<"}, "0.1.0", false, false}, // unparsable range contains nothing
		{Frame{VersionRange: ">=0.1.0", Versions: []string{"0.0.9"}}, "0.0.9", false, false}, // both (invalid): must satisfy both
		{Frame{Enabled: false, VersionRange: ">=0.1.0"}, "0.2.0", true, true},                // Enabled is the caller's concern
	}
	for _, tt := range tests {
		if got := tt.frame.Contains(tt.version); got != tt.want {
			t.Errorf("%v.Contains(%q) = %v, want %v", tt.frame, tt.version, got, tt.want)
		}
		if got := tt.frame.ContainsIncludingPrereleases(tt.version); got != tt.inPre {
			t.Errorf("%v.ContainsIncludingPrereleases(%q) = %v, want %v", tt.frame, tt.version, got, tt.inPre)
		}
	}
}

func TestFrameString(t *testing.T) {
	tests := []struct {
		frame Frame
		want  string
	}{
		{Frame{VersionRange: ">=0.161.0, <=0.162.0"}, `versionRange ">=0.161.0, <=0.162.0"`},
		{Frame{Versions: []string{"0.161.0", "0.162.0"}}, "versions [0.161.0, 0.162.0]"},
		{Frame{VersionRange: ">=1.0.0", Versions: []string{"1.0.0"}}, `versionRange ">=1.0.0" and versions [1.0.0]`},
		{Frame{}, "no versions"},
	}
	for _, tt := range tests {
		if got := tt.frame.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
