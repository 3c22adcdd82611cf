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
		`{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Not":{"Variable":"$.a","IsNull":true},"Next":"B"}],"Default":"B"},"B":{"Type":"Fail","Error":"E"}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Wait","Timestamp":"2016-03-14T01:59:00Z","End":true}}}`,
		`{"StartAt":"M","States":{"M":{"Type":"Map","Iterator":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"States.Format('{}', $.a)"},"End":true}}}`,
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
		}
	})
}

// FuzzPath checks that ParsePath never panics and that an accepted path evaluates and,
// when writable, writes without panicking.
func FuzzPath(f *testing.F) {
	for _, s := range []string{
		"$", "$$", "$.a.b[0]", "$['x']", `$["x y"]`, "$.a[-1]", "$.a[1:3]", "$.a[::2]", "$.a[0,2]",
		"$..a", "$..*", "$.a[*].b", "$.a[?(@.b == 'x' && @.c > 1)]", "$.a[?(@.b)]", "$$.Execution.Id",
		"$.a[", "$.", "x", "$.a[?(@.x ~ 1)]",
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
		if p.writable() {
			_, _ = p.Set(doc, "v")
			_, _ = p.Set("not an object", "v")
		}
		if IsIntrinsic(s) {
			t.Fatalf("a path parsed as an intrinsic: %q", s)
		}
	})
}
