// Package revision is a GitOps snapshot: the fleets, rollout policies,
// executor objects and rendered configurations of one commit. It loads them from files (a
// directory or the files an API request carries), validates every object
// with the issue codes of docs/policy.md, docs/version-selection.md and
// docs/executors.md, and assigns agents to fleets.
//
// Layout of a revision, by path:
//
//	fleets/*.yaml     kind: Fleet, one per file
//	policies/*.yaml   kind: RolloutPolicy, one per file
//	executors/*.yaml  kind: Executor (webhook, awx), one per file
//	configs/<fleet>.yaml   the rendered collector configuration of that fleet
//
// A fleet's configuration hash is the hex sha256 of its rendered file.
//
// Validation is what apply relies on: Load also refuses a rendered
// configuration a collector could not load (config.go) and anything over a
// limit of the store or the API (limits.go), so that a revision without
// errors is one the store can apply.
package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
)

// Issue codes of a revision, beyond those of the objects.
const (
	CodeDuplicateName  = "duplicate_name"  // two objects of a kind with one name
	CodeUnknownFile    = "unknown_file"    // a file outside the layout (warning)
	CodeConfigMissing  = "config_missing"  // a fleet without configs/<fleet>.yaml (warning)
	CodeConfigOrphaned = "config_orphaned" // configs/<name>.yaml without a fleet (warning)
	CodeEmpty          = "revision_empty"  // no fleet at all
	CodeConfigInvalid  = "config_invalid"  // configs/<fleet>.yaml is not one YAML mapping a collector can load

	// Limits (limits.go): what apply could not store is an issue of validation.
	CodeConfigTooLarge   = "config_too_large"   // configs/<fleet>.yaml over MaxConfigBytes
	CodeRevisionTooLarge = "revision_too_large" // the files together over MaxBytes
	CodeObjectTooLarge   = "object_too_large"   // a fleet or policy over MaxObjectBytes as stored
)

// Revision is one validated snapshot.
type Revision struct {
	Commit   string          `json:"commit"`
	Fleets   []fleet.Fleet   `json:"fleets"`
	Policies []policy.Policy `json:"policies"`
	// Executors are the executor objects that fleets name with
	// update.executorRef.
	Executors []executorobject.Object `json:"executors,omitempty"`
	// Configs holds the rendered configuration of each fleet, by fleet name.
	Configs map[string]Config `json:"configs"`
}

// Config is a rendered configuration.
type Config struct {
	Hash string `json:"hash"`
	Body []byte `json:"body"`
}

// Hash is the identity of a rendered configuration: hex sha256 of its bytes.
func Hash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Load builds a revision from files by path (slash-separated, relative to
// the revision's root) and validates it. Every issue carries the file in its
// path (fleets/edge.yaml: spec.update.selection...). The revision must not
// be applied when the list has errors.
func Load(files map[string][]byte, commit string) (Revision, issue.List) {
	rev := Revision{Commit: commit, Configs: map[string]Config{}}
	var issues issue.List
	var fleetFiles []string            // the file of each fleet, by index in rev.Fleets
	configFiles := map[string]string{} // the file of each configuration, by fleet name
	for _, p := range sortedPaths(files) {
		dir, name := path.Split(p)
		ext := path.Ext(name)
		base := strings.TrimSuffix(name, ext)
		switch {
		case ext != ".yaml" && ext != ".yml":
			issues.Warnf(CodeUnknownFile, p, layoutHint)
		case dir == "fleets/":
			f, is := fleet.Parse(files[p])
			issues = append(issues, prefixed(p, is)...)
			rev.Fleets = append(rev.Fleets, f)
			fleetFiles = append(fleetFiles, p)
		case dir == "policies/":
			pol, is := policy.Parse(files[p])
			pol.Path, pol.Commit = p, commit
			issues = append(issues, prefixed(p, is)...)
			rev.Policies = append(rev.Policies, pol)
		case dir == "configs/":
			// configs/edge.yaml and configs/edge.yml would both be fleet
			// edge's: refuse the pair rather than let the sort order pick.
			if other, dup := configFiles[base]; dup {
				issues.Errorf(CodeDuplicateName, p, "%s and %s are both the configuration of fleet %q: keep one", other, p, base)
				continue
			}
			configFiles[base] = p
			if n := len(files[p]); n > MaxConfigBytes {
				issues.Errorf(CodeConfigTooLarge, p, "%s is %s, over the limit of %s for a rendered configuration", p, byteSize(n), byteSize(MaxConfigBytes))
			} else {
				issues = append(issues, checkConfig(p, files[p])...)
			}
			rev.Configs[base] = Config{Hash: Hash(files[p]), Body: files[p]}
		case dir == "executors/":
			o, is := executorobject.Parse(files[p])
			o.Path, o.Commit = p, commit
			issues = append(issues, prefixed(p, is)...)
			rev.Executors = append(rev.Executors, o)
		default:
			issues.Warnf(CodeUnknownFile, p, layoutHint)
		}
	}
	issues = append(issues, checkSizes(files, rev, fleetFiles)...)
	issues = append(issues, rev.validate(fleetFiles)...)
	rev.fillConfigHashes()
	return rev, issues
}

// layoutHint is the message of a file outside the layout.
const layoutHint = "the file is ignored: a revision holds fleets/, policies/, executors/ and configs/ YAML files"

// validate checks what spans objects: unique names, the policy and executor
// references of fleets, and that every fleet has its rendered configuration. A fleet's
// issues carry the file it was read from (fleetFiles[i] for rev.Fleets[i]):
// a name that is not a valid file name, or a fleet whose file is not named
// after it, must still point at the file to fix.
func (rev Revision) validate(fleetFiles []string) issue.List {
	var issues issue.List
	if len(rev.Fleets) == 0 {
		issues.Errorf(CodeEmpty, "fleets/", "the revision has no fleet: add at least one fleets/<name>.yaml")
	}
	policies := map[string]bool{}
	for _, p := range rev.Policies {
		if policies[p.Name] && p.Name != "" {
			issues.Errorf(CodeDuplicateName, p.Path, "policy %q is defined twice", p.Name)
		}
		policies[p.Name] = true
	}
	executors := map[string]executorobject.Object{}
	for _, o := range rev.Executors {
		if _, dup := executors[o.Name]; dup && o.Name != "" {
			issues.Errorf(CodeDuplicateName, o.Path, "executor %q is defined twice", o.Name)
			continue
		}
		executors[o.Name] = o
	}
	fleets := map[string]bool{}
	for i, f := range rev.Fleets {
		where := fleetFiles[i]
		if fleets[f.Name] && f.Name != "" {
			issues.Errorf(CodeDuplicateName, where, "fleet %q is defined twice", f.Name)
		}
		fleets[f.Name] = true
		issues = append(issues, prefixed(where, fleet.Validate(f, func(n string) bool { return policies[n] }))...)
		issues = append(issues, prefixed(where, executorRef(f, executors))...)
		// A name that is refused names no file either: its error is enough.
		if _, ok := rev.Configs[f.Name]; !ok && f.Config.Hash == "" && fleet.ValidName(f.Name) {
			issues.Warnf(CodeConfigMissing, where, "fleet %q has no rendered configuration configs/%s.yaml: no configuration rollout arises for it", f.Name, f.Name)
		}
	}
	for name := range rev.Configs {
		if !fleets[name] {
			issues.Warnf(CodeConfigOrphaned, "configs/"+name+".yaml", "no fleet is named %q: the configuration is ignored", name)
		}
	}
	return issues
}

// executorRef checks that a webhook or awx fleet's update.executorRef names
// an executor object of that type (fleet.Validate reports a missing one).
func executorRef(f fleet.Fleet, executors map[string]executorobject.Object) issue.List {
	var l issue.List
	e, ref := f.UpdateExecutor(), f.Update.ExecutorRef
	if !e.NeedsRef() || ref == "" {
		return l
	}
	const at = "spec.update.executorRef"
	switch o, ok := executors[ref]; {
	case !ok:
		l.Errorf(fleet.CodeExecutorInvalid, at, "update.executorRef %q names no executor object: add executors/%s.yaml (kind: Executor, spec.type: %s)", ref, ref, e)
	case o.Type != string(e):
		l.Errorf(fleet.CodeExecutorInvalid, at, "update.executor is %s but executor object %q is of type %q", e, ref, o.Type)
	}
	return l
}

func (rev *Revision) fillConfigHashes() {
	for i, f := range rev.Fleets {
		if c, ok := rev.Configs[f.Name]; ok {
			rev.Fleets[i].Config.Hash = c.Hash
		}
	}
}

func prefixed(file string, is issue.List) issue.List {
	out := make(issue.List, len(is))
	for i, x := range is {
		x.Path = joinPath(file, x.Path)
		out[i] = x
	}
	return out
}

func joinPath(file, field string) string {
	if field == "" || strings.HasPrefix(field, file) {
		return file
	}
	return file + ": " + field
}

func sortedPaths(files map[string][]byte) []string {
	ps := make([]string, 0, len(files))
	for p := range files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// Policy returns the policy of a name, if the revision has it.
func (rev Revision) Policy(name string) (policy.Policy, bool) {
	for _, p := range rev.Policies {
		if p.Name == name {
			return p, true
		}
	}
	return policy.Policy{}, false
}

// Executor returns the executor object of a name, if the revision has it.
func (rev Revision) Executor(name string) (executorobject.Object, bool) {
	for _, o := range rev.Executors {
		if o.Name == name {
			return o, true
		}
	}
	return executorobject.Object{}, false
}

// Fleet returns the fleet of a name, if the revision has it.
func (rev Revision) Fleet(name string) (fleet.Fleet, bool) {
	for _, f := range rev.Fleets {
		if f.Name == name {
			return f, true
		}
	}
	return fleet.Fleet{}, false
}

// ReadDir reads a revision directory into files by slash path, skipping
// hidden entries and files that are not YAML (Load warns about those it sees).
func ReadDir(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read revision %s: %w", dir, err)
	}
	return files, nil
}
