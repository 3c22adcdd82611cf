package updater

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExtractBinary(t *testing.T) {
	bin := entry{name: binaryName, body: "the collector"}
	tests := []struct {
		name    string
		entries []entry
		max     int64
		text    string // in the error; "" for none
	}{
		{name: "upstream layout", entries: []entry{{name: "LICENSE", body: "l"}, {name: "README.md", body: "r"}, bin}},
		{name: "dot slash", entries: []entry{{name: "./" + binaryName, body: "the collector"}}},
		{name: "same name deeper is ignored", entries: []entry{{name: "docs/" + binaryName, body: "no"}, bin}},
		{name: "parent", entries: []entry{{name: "../evil", body: "x"}, bin}, text: "leaves the archive"},
		{name: "parent inside", entries: []entry{{name: "a/../../evil", body: "x"}, bin}, text: "leaves the archive"},
		{name: "absolute", entries: []entry{{name: "/etc/cron.d/evil", body: "x"}, bin}, text: "leaves the archive"},
		{name: "symlink binary", entries: []entry{{name: binaryName, typ: tar.TypeSymlink, link: "/bin/sh"}}, text: "is a link"},
		{name: "symlink elsewhere", entries: []entry{{name: "lib", typ: tar.TypeSymlink, link: "/etc"}, bin}, text: "is a link"},
		{name: "hard link", entries: []entry{{name: binaryName, typ: tar.TypeLink, link: "LICENSE"}}, text: "is a link"},
		{name: "directory of the name", entries: []entry{{name: binaryName + "/", typ: tar.TypeDir}}, text: "not one regular file"},
		{name: "twice", entries: []entry{bin, bin}, text: "not one regular file"},
		{name: "missing", entries: []entry{{name: "otelcol", body: "x"}}, text: "no otelcol-contrib"},
		{name: "too large", entries: []entry{bin}, max: 5, text: "larger than 5 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			max := tt.max
			if max == 0 {
				max = 1 << 20
			}
			err := extractBinary(bytes.NewReader(tarGz(t, tt.entries...)), binaryName, dir, max)
			if tt.text != "" {
				if !errors.Is(err, errArchive) || !strings.Contains(err.Error(), tt.text) {
					t.Fatalf("err %v, want %q", err, tt.text)
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
					t.Error("wrote outside the directory")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, binaryName))
			if err != nil || string(b) != "the collector" {
				t.Fatalf("binary %q, %v", b, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%d files extracted, want the binary only", len(entries))
			}
		})
	}
	if err := extractBinary(strings.NewReader("not gzip"), binaryName, t.TempDir(), 100); !errors.Is(err, errArchive) {
		t.Errorf("not gzip: %v", err)
	}
}

// Never switch to what did not verify: install refuses an archive that
// differs from the one whose hash was verified, and leaves no directory.
func TestInstall_RefusesArchiveChangedSinceVerified(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0")
	verified := release(t, "0.150.0")
	path := filepath.Join(t.TempDir(), "0.150.0.partial")
	if err := os.WriteFile(path, release(t, "0.150.0-swapped"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := e.layout.install(path, "0.150.0", sha256Of(verified), 1<<20)
	if !errors.Is(err, ErrNotVerified) {
		t.Fatalf("err %v", err)
	}
	if got := e.versions(); !equal(got, []string{"0.149.0"}) {
		t.Errorf("versions %v", got)
	}
}

func TestLayout_Current(t *testing.T) {
	e := newEnv(t)
	if v, err := e.layout.Current(); v != "" || err != nil {
		t.Errorf("no current: %q, %v", v, err)
	}
	e.seed("0.149.0")
	if target, _ := os.Readlink(filepath.Join(e.layout.Root, "current")); target != "versions/0.149.0" {
		t.Errorf("current → %s, want a relative link", target)
	}
	if v, err := e.layout.Current(); v != "0.149.0" || err != nil {
		t.Errorf("current %q, %v", v, err)
	}
	link := filepath.Join(e.layout.Root, "current")
	for _, target := range []string{"/usr/bin", "versions/0.150.0.partial", "elsewhere/0.149.0"} {
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if v, err := e.layout.Current(); err == nil {
			t.Errorf("current → %s read as %q", target, v)
		}
	}
}

// The switch needs the version's binary; it does not leave its temporary
// link behind.
func TestLayout_Switch(t *testing.T) {
	e := newEnv(t)
	e.seed("0.149.0", "0.150.0")
	if err := e.layout.switchTo("0.151.0"); err == nil {
		t.Error("switched to a version that is not there")
	}
	if err := e.layout.switchTo("0.149.0"); err != nil || e.current() != "0.149.0" {
		t.Fatalf("switch: %v, current %s", err, e.current())
	}
	entries, _ := os.ReadDir(e.layout.Root)
	if len(entries) != 2 {
		t.Errorf("root holds %d entries, want current and versions", len(entries))
	}
}
