package issue

import (
	"strings"
	"testing"
)

func TestChild(t *testing.T) {
	for _, c := range []struct{ path, key, want string }{
		{path: "", key: "spec", want: "spec"},
		{path: "spec", key: "waves", want: "spec.waves"},
		{path: "spec.headers", key: "X-Team", want: `spec.headers["X-Team"]`}, // not a plain word
		{path: "m", key: "labels.wave", want: `m["labels.wave"]`},
		{path: "m", key: "1st", want: `m["1st"]`},
		{path: "m", key: "", want: `m[""]`},
		{path: "m", key: strings.Repeat("-", 70), want: `m["` + strings.Repeat("-", 64) + `..."]`},
	} {
		if got := Child(c.path, c.key); got != c.want {
			t.Errorf("Child(%q, %q) = %q, want %q", c.path, c.key, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip(strings.Repeat("a", 63) + "éz"); got != strings.Repeat("a", 63)+"..." {
		t.Errorf("Clip cut inside a character: %q", got)
	}
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
}
