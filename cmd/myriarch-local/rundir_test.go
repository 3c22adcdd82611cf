package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// At start, the gates' folder of an earlier run that is gone (killed with
// SIGKILL, it removed nothing) is removed; the folder of a run that still
// runs is kept, and so are folders the stack cannot tell are its own. The
// new folder names its owner.
func TestStartGateServers_RemovesStaleFolders_KeepsLiveOnes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true") // its pid names no process once it has been waited for
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	folder := func(name, owner string) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "prometheus", "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	stale := folder("myriarch-gates-1", strconv.Itoa(dead.Process.Pid))
	live := folder("myriarch-gates-2", strconv.Itoa(os.Getpid()))
	noOwner := folder("myriarch-gates-3", "")                         // being made by another run, or an older stack's
	unreadable := folder("myriarch-gates-4", "x")                     // not an owner the stack wrote
	other := folder("someone-else-1", strconv.Itoa(dead.Process.Pid)) // not the stack's name

	p, a := chooseGateSources("run", func(k string) string {
		return map[string]string{"MYRIARCH_PROMETHEUS_URL": "http://127.0.0.1:1", "MYRIARCH_ALERTMANAGER_URL": "http://127.0.0.1:2"}[k]
	})
	var stderr bytes.Buffer
	g, err := startGateServers(p, a, "127.0.0.1:9464", true, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer g.stop(quietly)

	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of a run that is gone is still there (%v)", err)
	}
	for _, kept := range []string{live, noOwner, unreadable, other} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(kept), err)
		}
	}
	if filepath.Dir(g.dir) != tmp {
		t.Fatalf("the new folder %s is not in the temporary directory %s", g.dir, tmp)
	}
	owner, err := os.ReadFile(filepath.Join(g.dir, ownerFile))
	if err != nil || string(owner) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("the new folder's %s: %q, %v; want this process's pid", ownerFile, owner, err)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}
