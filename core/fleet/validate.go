package fleet

import (
	"strconv"

	"github.com/Masterminds/semver/v3"

	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
)

// Validate applies the rules of docs/version-selection.md ("Validation")
// and the executor and policy references. policyExists answers whether a
// RolloutPolicy object of that name exists in the same revision; nil skips
// the policy checks. A reference to "default" never fails: without that
// object the built-in policy applies.
//
// The syntax of versionRange and versions is checked even while the frame is
// disabled, so that enabling it later cannot surprise; the frame-dependent
// rules (exactly one of the two, an executor, collector.version inside)
// apply only when it is enabled.
func Validate(f Fleet, policyExists func(name string) bool) issue.List {
	var l issue.List
	validateName(&l, f.Name)
	validateExecutor(&l, f)
	validFrame := validateFrame(&l, f)
	if fr := f.Update.Selection; fr.Enabled && validFrame && f.GitTarget() != "" && !fr.Contains(f.GitTarget()) {
		l.Errorf(CodeSelectionInvalid, "spec.collector.version",
			"collector.version %s is outside update.selection (%s)", f.GitTarget(), fr)
	}
	if policyExists != nil {
		validatePolicy(&l, "spec.update.selection.rolloutPolicy", "update.selection.rolloutPolicy", f.Update.Selection.RolloutPolicy, policyExists)
		validatePolicy(&l, "spec.rollout.configPolicy", "rollout.configPolicy", f.Rollout.ConfigPolicy, policyExists)
		validatePolicy(&l, "spec.rollout.versionPolicy", "rollout.versionPolicy", f.Rollout.VersionPolicy, policyExists)
	}
	return l
}

// validateName refuses a name outside NamePattern. The name is a path
// segment of the API (/fleets/{name}), the file name of the fleet's
// configuration (configs/<name>.yaml) and a sort key of the store: '/',
// "..", upper case or other letters would make a fleet that is listed but
// cannot be addressed, or two spellings of one fleet.
func validateName(l *issue.List, name string) {
	switch {
	case name == "":
		l.Errorf(CodeFieldRequired, "metadata.name", "metadata.name is required")
	case !ValidName(name):
		l.Errorf(CodeNameInvalid, "metadata.name",
			"fleet name %q must be at most %d lowercase letters, digits and '-', starting and ending with a letter or digit", name, MaxNameLength)
	}
}

func validateExecutor(l *issue.List, f Fleet) {
	e := f.UpdateExecutor()
	switch {
	case !e.Valid():
		l.Errorf(CodeExecutorInvalid, "spec.update.executor",
			"update.executor %q is not one of none, updater, webhook, awx, manual", string(e))
	case e.NeedsRef() && f.Update.ExecutorRef == "":
		l.Errorf(CodeExecutorInvalid, "spec.update.executorRef",
			"update.executor %s needs update.executorRef (the name of an executor object)", e)
	case (e == ExecutorManual || e == ExecutorUpdater) && f.Update.ExecutorRef != "":
		l.Warnf(CodeExecutorInvalid, "spec.update.executorRef",
			"executor %s is built in and has no executor object: the reference is ignored", e)
	}
	if e != ExecutorNone && e.Valid() && f.GitTarget() == "" && !f.Update.Selection.Enabled {
		l.Warnf(CodeVersionMissing, "spec.collector.version", "executor is %s but collector.version is empty", e)
	}
}

// validateFrame reports the selection_invalid rules and whether the frame is
// well-formed enough to test collector.version against it.
func validateFrame(l *issue.List, f Fleet) bool {
	const path = "spec.update.selection"
	fr := f.Update.Selection
	ok := true
	if fr.VersionRange != "" {
		if _, err := semver.NewConstraint(fr.VersionRange); err != nil {
			l.Errorf(CodeSelectionInvalid, path+".versionRange",
				"versionRange %q is not a valid semantic version constraint", fr.VersionRange)
			ok = false
		}
	}
	if !validVersions(l, path+".versions", fr.Versions) {
		ok = false
	}
	switch {
	case fr.Enabled && (fr.VersionRange == "") == (len(fr.Versions) == 0):
		l.Errorf(CodeSelectionInvalid, path,
			"exactly one of update.selection.versionRange or update.selection.versions is required")
		ok = false
	case !fr.Enabled && fr.Declares():
		l.Warnf(CodeSelectionInvalid, path, "update.selection is disabled: versionRange/versions are ignored")
	}
	if fr.Enabled && f.UpdateExecutor() == ExecutorNone {
		l.Errorf(CodeSelectionInvalid, "spec.update.executor",
			"UI-triggered updates need an update executor (update.executor is none)")
	}
	return ok
}

// validVersions checks that every entry is a strict semantic version without
// a leading v (StrictNewVersion refuses the v and the empty string) and is
// listed once; a repeat is reported at its second index.
func validVersions(l *issue.List, path string, versions []string) bool {
	ok := true
	first := map[string]bool{}
	for i, v := range versions {
		at := path + "[" + strconv.Itoa(i) + "]"
		if _, err := semver.StrictNewVersion(v); err != nil {
			l.Errorf(CodeSelectionInvalid, at, "versions[%d] %q must be a semantic version without \"v\"", i, v)
			ok = false
			continue
		}
		if first[v] {
			l.Errorf(CodeSelectionInvalid, at, "versions[%d] %q is listed twice", i, v)
			ok = false
			continue
		}
		first[v] = true
	}
	return ok
}

func validatePolicy(l *issue.List, path, field, name string, exists func(string) bool) {
	if name == "" || name == policy.DefaultName || exists(name) {
		return
	}
	l.Errorf(CodePolicyNotFound, path, "%s %q names a policy that does not exist", field, name)
}
