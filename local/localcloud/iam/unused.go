package iam

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Grant is one (action, resource pattern) that an Allow statement of a
// role's policy grants. For a NotAction (NotResource) statement, Action
// (Resource) is "NotAction:" ("NotResource:") and the excluded patterns
// joined by ",", and the grant covers everything else.
type Grant struct {
	Role     string // the role's logical id
	Action   string
	Resource string
	Sid      string
	Source   string // the Document's: "inline", "managed:<arn>", "policy:<logical id>"
}

// Unused lists each (role, action, resource pattern) that a role's Allow
// statements grant and that no recorded call of that role used (a call
// uses a grant when the action matches the statement's action, wildcards
// included, and the resource matches the statement's resource pattern).
// Only allowed calls count. Conditions are not considered: a call that
// matched the action and the resource used the grant. Nothing is left
// out: the caller decides which grants to ignore.
func Unused(p *Policies, calls []Call) []Grant {
	byRole := map[string][]Call{}
	for _, c := range calls {
		if c.Allowed {
			byRole[c.Role] = append(byRole[c.Role], c)
		}
	}
	var out []Grant
	for _, id := range p.RoleIDs() {
		for _, g := range grantsOf(p.Roles[id]) {
			if !g.usedBy(byRole[id]) {
				out = append(out, g.Grant)
			}
		}
	}
	return out
}

// grant is a Grant with the patterns it matches.
type grant struct {
	Grant
	actions, resources     []string
	notAction, notResource bool
}

func (g grant) usedBy(calls []Call) bool {
	for _, c := range calls {
		if anyMatch(g.actions, c.Action, true) != g.notAction && anyMatch(g.resources, c.Resource, false) != g.notResource {
			return true
		}
	}
	return false
}

// statement is the part of a policy statement that grants.
type statement struct {
	Sid                                      string
	Effect                                   string
	Action, NotAction, Resource, NotResource stringList
}

// grantsOf splits each Allow statement of each of the role's documents
// into one grant per action and resource.
func grantsOf(r *Role) []grant {
	var out []grant
	for _, d := range r.Documents {
		var doc struct{ Statement statements }
		if err := json.Unmarshal(d.Policy, &doc); err != nil {
			continue // the evaluator reports malformed policies on every call
		}
		for _, st := range doc.Statement {
			if st.Effect != "Allow" {
				continue
			}
			base := Grant{Role: r.LogicalID, Sid: st.Sid, Source: d.Source}
			out = append(out, split(base, st)...)
		}
	}
	return out
}

func split(base Grant, st statement) []grant {
	actions, notAction := patterns(st.Action, st.NotAction, "NotAction:")
	resources, notResource := patterns(st.Resource, st.NotResource, "NotResource:")
	var out []grant
	for _, a := range actions {
		for _, res := range resources {
			g := grant{Grant: base, notAction: notAction, notResource: notResource}
			g.Action, g.actions = a.label, a.patterns
			g.Resource, g.resources = res.label, res.patterns
			out = append(out, g)
		}
	}
	return out
}

type labelled struct {
	label    string
	patterns []string
}

// patterns gives one entry per listed pattern, or a single negated entry
// for a Not* list.
func patterns(list, not stringList, prefix string) ([]labelled, bool) {
	if len(not) > 0 {
		return []labelled{{prefix + strings.Join(not, ","), not}}, true
	}
	out := make([]labelled, len(list))
	for i, p := range list {
		out[i] = labelled{p, []string{p}}
	}
	return out, false
}

// anyMatch reports whether value matches one of the IAM patterns ("*" any
// run of characters, "?" one); actions compare case-insensitively, as IAM
// does.
func anyMatch(patterns []string, value string, fold bool) bool {
	for _, p := range patterns {
		expr := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(p)) + "$"
		if fold {
			expr = "(?i)" + expr
		}
		if regexp.MustCompile(expr).MatchString(value) {
			return true
		}
	}
	return false
}

// stringList reads a policy field that is a string or a list of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = stringList{one}
		return nil
	}
	var many []string
	err := json.Unmarshal(b, &many)
	*l = many
	return err
}

// statements reads Statement, a statement or a list of them.
type statements []statement

func (s *statements) UnmarshalJSON(b []byte) error {
	var one statement
	if len(b) > 0 && b[0] == '{' {
		err := json.Unmarshal(b, &one)
		*s = statements{one}
		return err
	}
	var many []statement
	err := json.Unmarshal(b, &many)
	*s = many
	return err
}
