package issue

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestRefuseYAMLTags_PathsAndTheValueAsWritten(t *testing.T) {
	var doc yaml.Node
	src := "a: &x !!int 0.161.0\nb: *x\nm: {labels.fleet: !custom edge}\nl: [1, !!binary aGk=]\n!!str k: 'q'\nplain: 1\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	l := RefuseYAMLTags(&doc)
	var paths []string
	for _, is := range l {
		if is.Code != CodeYAMLTag || is.Severity != Error {
			t.Errorf("issue %v, want an error %s", is, CodeYAMLTag)
		}
		paths = append(paths, is.Path)
	}
	want := []string{"a", `m["labels.fleet"]`, "l[1]", "k"} // the alias b is the anchor's value, reported once
	if len(paths) != len(want) {
		t.Fatalf("paths %q, want %q", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("paths %q, want %q", paths, want)
		}
	}
	a := doc.Content[0].Content[1]
	if a.ShortTag() != "!!str" || a.Value != "0.161.0" {
		t.Errorf("after the check a is %s %q, want the text as written", a.ShortTag(), a.Value)
	}
	if again := RefuseYAMLTags(&doc); len(again) != 0 {
		t.Errorf("a second check found %v: the tags were not removed", again)
	}
}
