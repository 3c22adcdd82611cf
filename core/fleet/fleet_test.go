package fleet

import "testing"

func TestPolicyNames(t *testing.T) {
	tests := []struct {
		name                            string
		rollout                         RolloutPolicies
		selectionPolicy                 string
		wantConfig, wantVersion, wantUI string
	}{
		{name: "nothing set", rollout: RolloutPolicies{}, selectionPolicy: "", wantConfig: "default", wantVersion: "default", wantUI: "default"},
		{name: "versionPolicy only", rollout: RolloutPolicies{VersionPolicy: "gv"}, selectionPolicy: "", wantConfig: "default", wantVersion: "gv", wantUI: "gv"},          // UI falls back to versionPolicy
		{name: "rolloutPolicy wins for UI", rollout: RolloutPolicies{VersionPolicy: "gv"}, selectionPolicy: "ui", wantConfig: "default", wantVersion: "gv", wantUI: "ui"}, // Git rollouts keep versionPolicy
		{name: "rolloutPolicy without versionPolicy", rollout: RolloutPolicies{ConfigPolicy: "c"}, selectionPolicy: "ui", wantConfig: "c", wantVersion: "default", wantUI: "ui"},
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
		{frame: rng, version: "0.161.0", want: true, inPre: true},                                                         // lower bound included
		{frame: rng, version: "0.162.0", want: true, inPre: true},                                                         // upper bound included
		{frame: rng, version: "0.160.9", want: false, inPre: false},                                                       // below
		{frame: rng, version: "0.163.0", want: false, inPre: false},                                                       // above
		{frame: rng, version: "v0.161.0", want: true, inPre: true},                                                        // normalized first
		{frame: rng, version: "0.162.0-rc.1", want: false, inPre: true},                                                   // prerelease refused by a range without prerelease part
		{frame: rng, version: "0.161", want: false, inPre: false},                                                         // not strict semver
		{frame: rng, version: "", want: false, inPre: false},                                                              // nothing
		{frame: preRange, version: "0.163.0-rc.1", want: true, inPre: true},                                               // a range with a prerelease part admits prereleases
		{frame: list, version: "0.161.0", want: true, inPre: true},                                                        // exact match
		{frame: list, version: "0.163.0-rc.1", want: true, inPre: true},                                                   // a listed prerelease is in
		{frame: list, version: "0.162.0", want: false, inPre: false},                                                      // not listed
		{frame: Frame{}, version: "0.161.0", want: false, inPre: false},                                                   // declares nothing
		{frame: Frame{VersionRange: "<<"}, version: "0.1.0", want: false, inPre: false},                                   // unparsable range contains nothing
		{frame: Frame{VersionRange: ">=0.1.0", Versions: []string{"0.0.9"}}, version: "0.0.9", want: false, inPre: false}, // both (invalid): must satisfy both
		{frame: Frame{Enabled: false, VersionRange: ">=0.1.0"}, version: "0.2.0", want: true, inPre: true},                // Enabled is the caller's concern
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
		{frame: Frame{VersionRange: ">=0.161.0, <=0.162.0"}, want: `versionRange ">=0.161.0, <=0.162.0"`},
		{frame: Frame{Versions: []string{"0.161.0", "0.162.0"}}, want: "versions [0.161.0, 0.162.0]"},
		{frame: Frame{VersionRange: ">=1.0.0", Versions: []string{"1.0.0"}}, want: `versionRange ">=1.0.0" and versions [1.0.0]`},
		{frame: Frame{}, want: "no versions"},
	}
	for _, tt := range tests {
		if got := tt.frame.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
