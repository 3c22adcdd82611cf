package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/executorobject/executortest"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/fleet/fleettest"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// parse is what the parser of kind says of data: Parse's issues, and for a
// fleet that Parse reads without an error those of Validate, which answers
// whether a policy exists with policyExists (nil: it does not ask).
func parse(kind string, data []byte, policyExists func(string) bool) issue.List {
	switch kind {
	case policy.ObjectKind:
		_, issues := policy.Parse(data)
		return issues
	case fleet.ObjectKind:
		f, issues := fleet.Parse(data)
		if issues.HasErrors() {
			return issues
		}
		return append(issues, fleet.Validate(f, policyExists)...)
	case executorobject.ObjectKind:
		_, issues := executorobject.Parse(data)
		return issues
	}
	panic("no parser for kind " + kind)
}

// parserOnly is a rule of a parser that a schema cannot express: an error
// with Code whose message contains Msg. A document whose errors all match
// such rules is one the schema must not refuse; any other error of the
// parser is structural, and the schema must refuse the document.
type parserOnly struct{ Code, Msg, Reason string }

// Reasons shared by the kinds.
const (
	yamlLevel = "a YAML error (syntax, a second document, a key set twice): the editor's YAML reader reports it; there is no JSON value to validate"
	aliases   = "aliases: the editor's reader expands them, and so does this test's"
)

var policyOnly = []parserOnly{
	{policy.CodeYAMLInvalid, "not valid YAML", yamlLevel},
	{policy.CodeYAMLInvalid, "more than one YAML document", yamlLevel},
	{policy.CodeYAMLInvalid, "is set twice", yamlLevel},
	{policy.CodeTypeInvalid, "keys must be plain strings", "a key that is a list or a mapping has no JSON form: the editor's YAML reader reports it"},
	{policy.CodeYAMLInvalid, "more than 10000 values", "the parser's budget of values; the editor's reader has its own, and past it there is no value"},
	{policy.CodeTypeInvalid, "99999999999999999999999", "overflows a 64-bit integer: JSON Schema integers have no size"},
	{policy.CodeDurationInvalid, "invalid duration \"9999999999h\"", "overflows time.Duration: a pattern cannot bound the number"},
	{policy.CodeWaveInvalid, "which is not more than", "percents that strictly increase compare the waves with each other"},
	{policy.CodeWaveNameInvalid, "is already used by", "unique wave names compare the waves with each other"},
	{policy.CodeWaveNameInvalid, "reserved for the last wave", "the position of a wave in the list"},
	{policy.CodeTimezoneInvalid, "unknown time zone", "whether a name is an IANA zone is the zone database's answer"},
	{policy.CodeSelectorInvalid, "condition ", "the grammar of conditions (sets, operators, commas); the schema checks that there is one"},
	{policy.CodeBakeInvalid, "exceeds 24h", "a duration's value: a pattern cannot compare it with 24h"},
	{policy.CodeTopologyInvalid, "no wave has by", "regions and topology are refused unless some wave has by: a rule across the waves"},
	{policy.CodeTopologyInvalid, "both read from the attribute", "the region and zone attributes compared with each other and with their defaults"},
	{policy.CodeGateInvalid, "interval must be at least 1s", "a duration's value: a pattern cannot compare it with 1s"},
	{policy.CodeGateInvalid, "is above max", "min and max compared with each other"},
	{policy.CodeGateInvalid, "is already used by metrics", "unique metric names compare the metrics with each other"},
	{policy.CodeGateInvalid, "error parsing regexp", "the regular expression of a matcher"},
	{policy.CodePlaceholderUnknown, "unknown placeholder", "a template's {name}s against the names its field substitutes: refusing all but a few names inside braces takes a lookahead, which the schema's patterns (RE2) do not have"},
	{policy.CodeApprovalInvalid, "which the policy does not have", "approvalsBetween names waves of the same policy"},
	{policy.CodeApprovalInvalid, "expiry must be at least 1m", "a duration's value: a pattern cannot compare it with 1m"},
	{policy.CodeFreezeInvalid, "is not after from", "two times compared with each other"},
}

var fleetOnly = []parserOnly{
	{fleet.CodeYAMLInvalid, "not valid YAML", yamlLevel},
	{fleet.CodeFieldInvalid, "is listed twice", yamlLevel},
	{fleet.CodeSelectionInvalid, "is not a valid semantic version constraint", "the grammar of a semantic version constraint"},
	{fleet.CodeSelectionInvalid, "is outside update.selection", "collector.version tested against the range or the list"},
	{fleet.CodePolicyNotFound, "", "a RolloutPolicy of the revision: another file"},
}

var executorOnly = []parserOnly{
	{executorobject.CodeYAMLInvalid, "not valid YAML", yamlLevel},
	{executorobject.CodeYAMLInvalid, "is set twice", yamlLevel},
	{executorobject.CodeYAMLInvalid, "aliases (*", aliases + "; the parser refuses them"},
	{executorobject.CodeYAMLTagInvalid, "the YAML tag", "a YAML tag such as !!binary: the editor sees the text written, a string"},
	{executorobject.CodeInvalid, "is longer than", "a duration's value: a pattern cannot compare it with its bound"},
}

// masked are documents whose parser-only error hides a structural one that
// the parser reports only once the first is fixed: the schema rightly
// refuses them.
var masked = map[string]string{
	policytest.Doc("waves: [{name: rest, percent: 10}, {name: b, percent: 20}]"): "rest before the last wave is reported first; its percent 10 (rest must be 100) once it is last",
}

// agreement counts one kind's documents: those the parser accepts, those it
// refuses with a structural error, those it refuses only by parser-only
// rules, and the documents each rule explains.
type agreement struct {
	valid, structural, parserOnly int
	byRule                        map[int]int
}

func (a agreement) String() string {
	return fmt.Sprintf("%d valid, %d invalid structurally, %d invalid by parser-only rules (%d rules)", a.valid, a.structural, a.parserOnly, len(a.byRule))
}

// TestAgreement: on every document of the parsers' tables, the schema and
// the parser agree. Valid for the parser is valid for the schema; a
// structural error of the parser is a refusal of the schema; errors that
// only parser-only rules explain are not refused by the schema. A rule that
// explains no document is stale and fails the test too.
func TestAgreement(t *testing.T) {
	compiled := schemas(t)
	maskedSeen := map[string]bool{}
	type source struct{ Name, Doc string }
	var pol, fl, ex []source
	for _, c := range policytest.All() {
		pol = append(pol, source{c.Name, c.Doc})
	}
	for _, c := range fleettest.All() {
		fl = append(fl, source{c.Name, c.Doc})
	}
	for _, c := range executortest.All() {
		ex = append(ex, source{c.Name, c.Doc})
	}
	for _, k := range []struct {
		kind  string
		file  string
		docs  []source
		rules []parserOnly
	}{
		{kind: policy.ObjectKind, file: RolloutPolicyFile, docs: pol, rules: policyOnly},
		{kind: fleet.ObjectKind, file: FleetFile, docs: fl, rules: fleetOnly},
		{kind: executorobject.ObjectKind, file: ExecutorFile, docs: ex, rules: executorOnly},
	} {
		t.Run(k.kind, func(t *testing.T) {
			a := agreement{byRule: map[int]int{}}
			for _, d := range k.docs {
				errs := errorsOf(parse(k.kind, []byte(d.Doc), fleettest.PolicyExists))
				structural, rules := classify(errs, k.rules)
				got := verdict(compiled[k.file], []byte(d.Doc))
				switch {
				case len(errs) == 0:
					a.valid++
					if got != nil {
						t.Errorf("%s: valid for the parser, refused by the schema: %v\n%s", d.Name, got, d.Doc)
					}
				case len(structural) > 0:
					a.structural++
					if got == nil {
						t.Errorf("%s: the parser refuses it (%v) and the schema accepts it: make the schema refuse it, or add a parser-only rule with the reason the schema cannot\n%s", d.Name, structural, d.Doc)
					} else if errors.Is(got, errNoValue) {
						t.Errorf("%s: structural error %v, but the document is no JSON value (%v): a parser-only YAML rule is missing", d.Name, structural, got)
					}
				default:
					a.parserOnly++
					for _, r := range rules {
						a.byRule[r]++
					}
					if _, ok := masked[d.Doc]; ok {
						maskedSeen[d.Doc] = true
						if got == nil {
							t.Errorf("%s: listed as masked, but the schema accepts it: remove it from masked", d.Name)
						}
					} else if got != nil && !errors.Is(got, errNoValue) {
						t.Errorf("%s: only parser-only rules explain its errors %v, yet the schema refuses it: %v\n(the schema is stricter than the parser, or a rule is no longer parser-only)", d.Name, errs, got)
					}
				}
			}
			for i, r := range k.rules {
				if a.byRule[i] == 0 {
					t.Errorf("parser-only rule %s %q explains no document: remove it", r.Code, r.Msg)
				}
			}
			t.Logf("%s: %d documents: %s", k.kind, len(k.docs), a)
		})
	}
	for doc := range masked {
		if !maskedSeen[doc] {
			t.Errorf("masked document is no parser-only case of the tables: remove it\n%s", doc)
		}
	}
}

func errorsOf(l issue.List) issue.List {
	var out issue.List
	for _, is := range l {
		if is.Severity == issue.Error {
			out = append(out, is)
		}
	}
	return out
}

// classify splits errs into the structural ones and the indexes of the
// parser-only rules that explain the others.
func classify(errs issue.List, rules []parserOnly) (structural issue.List, matched []int) {
	for _, e := range errs {
		rule := -1
		for i, r := range rules {
			if e.Code == r.Code && strings.Contains(e.Message, r.Msg) {
				rule = i
				break
			}
		}
		if rule < 0 {
			structural = append(structural, e)
		} else {
			matched = append(matched, rule)
		}
	}
	return structural, matched
}
