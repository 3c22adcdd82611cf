package selector

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Conditions are the second form of a selector, the one of wave rollouts:
// comma-separated conditions that must all hold.
//
//	key=value         the attribute is set to value
//	key!=value        the attribute is missing or has another value
//	key in (a, b)     the attribute is set to one of the values
//	key notin (a, b)  the attribute is missing or has none of the values
//
// Spaces around keys, operators and values are not significant; a value may
// contain inner spaces and any character but ",", "(" and ")" (a value with
// those needs matchAttributes), and may not begin with "=" (key==value is
// refused rather than read as a comparison with "=value"). A key is one word without spaces and without
// "=", "!", ",", "(" or ")".
//
// Why not k8s.io/apimachinery/pkg/labels, which reads the same syntax: it
// validates keys and values as Kubernetes labels (at most 63 characters of
// [A-Za-z0-9_.-]), so site.timezone=Europe/Berlin, a host name with a space
// or a long pod name would be refused although they are ordinary agent
// attribute values; it also accepts more than these four forms (key, !key,
// ==, <, >) and would bring a large dependency. The grammar is small enough to
// parse here; FuzzParseConditions checks it.
type Conditions []Condition

// Condition is one condition: the attribute Key compared by Op with Values
// (one value for = and !=, one or more for in and notin).
type Condition struct {
	Key    string
	Op     Operator
	Values []string
}

// Operator of a condition.
type Operator string

const (
	Equals    Operator = "="
	NotEquals Operator = "!="
	In        Operator = "in"
	NotIn     Operator = "notin"
)

// SyntaxError is a condition that cannot be read. Condition counts from 1;
// 0 concerns the text as a whole.
type SyntaxError struct {
	Condition int
	Text      string
	Reason    string
}

func (e *SyntaxError) Error() string {
	if e.Condition == 0 {
		return e.Reason
	}
	return fmt.Sprintf("condition %d %q: %s", e.Condition, clip(e.Text), e.Reason)
}

// ParseConditions reads "key=value, key!=value, key in (a, b), key notin (c)".
func ParseConditions(s string) (Conditions, error) {
	parts, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	out := make(Conditions, 0, len(parts))
	for i, part := range parts {
		c, reason := parseCondition(strings.TrimSpace(part))
		if reason != "" {
			return nil, &SyntaxError{Condition: i + 1, Text: strings.TrimSpace(part), Reason: reason}
		}
		out = append(out, c)
	}
	return out, nil
}

// SplitConditions splits conditions at the commas outside parentheses,
// untrimmed, for a reader that handles some forms itself before it parses
// each part with ParseConditions (the inventory's `key=` with an empty value).
func SplitConditions(s string) ([]string, error) { return splitTop(s) }

// splitTop splits s at the commas outside parentheses: the commas of a set
// (a, b) belong to its condition.
func splitTop(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &SyntaxError{Reason: `the conditions are empty; write e.g. "cloud.region=eu-west-1, canary!=true"`}
	}
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			if depth++; depth > 1 {
				return nil, &SyntaxError{Condition: len(parts) + 1, Text: s[start:], Reason: "parentheses cannot nest"}
			}
		case ')':
			if depth--; depth < 0 {
				return nil, &SyntaxError{Condition: len(parts) + 1, Text: s[start:], Reason: `")" without "("`}
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, &SyntaxError{Condition: len(parts) + 1, Text: s[start:], Reason: `"(" without ")"`}
	}
	return append(parts, s[start:]), nil
}

// parseCondition reads one trimmed condition; reason is empty when it could.
// An "=" before any "(" makes it an equality, otherwise it is a set.
func parseCondition(s string) (c Condition, reason string) {
	if s == "" {
		return c, "the condition is empty; remove the extra comma"
	}
	eq, paren := strings.IndexByte(s, '='), strings.IndexByte(s, '(')
	switch {
	case eq >= 0 && (paren < 0 || eq < paren):
		c.Op, c.Key = Equals, s[:eq]
		if strings.HasSuffix(c.Key, "!") {
			c.Op, c.Key = NotEquals, strings.TrimSuffix(c.Key, "!")
		}
		c.Key = strings.TrimSpace(c.Key)
		c.Values = []string{strings.TrimSpace(s[eq+1:])}
	case paren >= 0:
		if !strings.HasSuffix(s, ")") {
			return c, `text after ")"; a set ends the condition, e.g. region in (eu-1, eu-2)`
		}
		words := strings.Fields(s[:paren])
		if len(words) != 2 || (words[1] != string(In) && words[1] != string(NotIn)) {
			return c, `expected key in (a, b) or key notin (a, b)`
		}
		c.Key, c.Op = words[0], Operator(words[1])
		for v := range strings.SplitSeq(s[paren+1:len(s)-1], ",") {
			c.Values = append(c.Values, strings.TrimSpace(v))
		}
	default:
		return c, "expected key=value, key!=value, key in (a, b) or key notin (a, b)"
	}
	return c, c.problem()
}

// problem returns what makes a condition invalid, or "": the rules that
// ParseConditions enforces, for conditions built in code too.
func (c Condition) problem() string {
	if c.Key == "" {
		return "the attribute name is empty"
	}
	if strings.ContainsFunc(c.Key, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("=!,()", r) }) {
		return fmt.Sprintf("attribute name %q may not contain spaces or any of = ! , ( )", clip(c.Key))
	}
	switch c.Op {
	case Equals, NotEquals:
		if len(c.Values) != 1 {
			return fmt.Sprintf("%s compares with one value, got %d", c.Op, len(c.Values))
		}
		// key==value (Kubernetes) would otherwise compare with "=value"
		// and silently match nothing.
		if strings.HasPrefix(c.Values[0], "=") {
			return fmt.Sprintf("== is not an operator; write %s%s%s", c.Key, c.Op, strings.TrimLeft(c.Values[0], "= "))
		}
	case In, NotIn:
		if len(c.Values) == 0 {
			return fmt.Sprintf("%s needs at least one value", c.Op)
		}
	default:
		return fmt.Sprintf("unknown operator %q; use =, !=, in or notin", clip(string(c.Op)))
	}
	for _, v := range c.Values {
		switch {
		case v == "":
			return fmt.Sprintf("a value of %s is empty", c.Key)
		case v != strings.TrimSpace(v):
			return fmt.Sprintf("value %q has spaces at its ends", clip(v))
		case strings.ContainsAny(v, ",()"):
			return fmt.Sprintf("value %q contains , ( or ); match such a value with matchAttributes", clip(v))
		}
	}
	return ""
}

// Err returns the first invalid condition as a *SyntaxError, or nil.
func (cs Conditions) Err() error {
	for i, c := range cs {
		if reason := c.problem(); reason != "" {
			return &SyntaxError{Condition: i + 1, Text: c.String(), Reason: reason}
		}
	}
	return nil
}

// Matches reports whether every condition holds for attrs. A missing
// attribute satisfies != and notin: canary!=true selects the agents that are
// not canaries, also those without the attribute.
func (cs Conditions) Matches(attrs Attributes) bool {
	for _, c := range cs {
		if !c.Matches(attrs) {
			return false
		}
	}
	return true
}

// Matches reports whether the condition holds for attrs.
func (c Condition) Matches(attrs Attributes) bool {
	v, ok := attrs.Attr(c.Key)
	listed := ok && slices.Contains(c.Values, v)
	switch c.Op {
	case Equals, In:
		return listed
	case NotEquals, NotIn:
		return !listed
	}
	return false
}

// String is the canonical form: key=value, key!=value, key in (a, b).
// ParseConditions reads it back to the same conditions.
func (c Condition) String() string {
	switch c.Op {
	case Equals, NotEquals:
		return c.Key + string(c.Op) + strings.Join(c.Values, ",")
	}
	return c.Key + " " + string(c.Op) + " (" + strings.Join(c.Values, ", ") + ")"
}

// String joins the conditions with ", ".
func (cs Conditions) String() string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// Conditions travel in JSON (the policy snapshot of a rollout, the API) and
// YAML as their text, the form a person writes and reads.

// MarshalText writes the canonical form.
func (cs Conditions) MarshalText() ([]byte, error) { return []byte(cs.String()), nil }

// UnmarshalText reads the conditions; an empty text is no conditions.
func (cs *Conditions) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*cs = nil
		return nil
	}
	parsed, err := ParseConditions(string(b))
	if err != nil {
		return err
	}
	*cs = parsed
	return nil
}

// Clone returns a copy that shares no slice with cs.
func (cs Conditions) Clone() Conditions {
	if cs == nil {
		return nil
	}
	out := make(Conditions, len(cs))
	for i, c := range cs {
		out[i] = Condition{Key: c.Key, Op: c.Op, Values: slices.Clone(c.Values)}
	}
	return out
}

// clip cuts user text for a message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}
