package asl

import (
	"testing"
)

// FuzzParseDefinition checks that Parse never panics and that what it accepts can be
// evaluated statically without panicking either.
func FuzzParseDefinition(f *testing.F) {
	for _, s := range []string{
		validDefinition,
		`{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"B"}],"Default":"B"},"B":{"Type":"Fail","Error":"E"}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Wait","TimestampPath":"$.t","End":true}}}`,
		// Refused features.
		`{"StartAt":"M","States":{"M":{"Type":"Map","Iterator":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","x.$":"States.Format('{}', $.a)"},"End":true}}}`,
		`{"StartAt":1,"States":[]}`, `[]`, `null`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, def string) {
		d, err := Parse(def)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if _, ok := d.States[d.StartAt]; !ok {
			t.Fatalf("accepted a definition whose StartAt %q is not a state", d.StartAt)
		}
		for _, st := range d.States {
			if st.Parameters != nil {
				_, _ = st.Parameters.Eval(map[string]any{}, map[string]any{})
			}
			for _, r := range st.Choices {
				_, _ = r.Eval(map[string]any{})
			}
			if st.TimestampPath != nil {
				_, _ = st.WaitUntil(map[string]any{})
			}
		}
	})
}

// FuzzPath checks that ParsePath never panics, that an accepted path evaluates and
// writes without panicking, and that it renders back to the text it was parsed from.
func FuzzPath(f *testing.F) {
	for _, s := range []string{
		"$", "$$", "$.a.b", "$$.Execution.Id", "$$.Task.Token",
		// Refused or invalid.
		"$.a.b[0]", "$['x']", `$["x y"]`, `$['it\'s']`, "$.a[-1]", "$.a[1:3]", "$.a[::2]", "$.a[0,2]", "$..a", "$..*", "$.a[*].b", "$.a[?(@.b == 'x')]",
		"$.a[", "$.", "x", "$[99999999999]",
	} {
		f.Add(s)
	}
	doc := map[string]any{"a": []any{map[string]any{"b": "x", "c": 2.0}, "s", nil}, "x": map[string]any{"y": true}}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		_, _ = p.Get(doc)
		if !p.IsContext() {
			_, _ = p.Set(doc, "v")
			_, _ = p.Set("not an object", "v")
		}
		if p.String() != s {
			t.Fatalf("ParsePath(%q).String() = %q", s, p.String())
		}
	})
}
