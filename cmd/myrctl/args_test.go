package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
)

// TestEmptyArgs_RefusedBeforeAnyRequest: every command that takes a
// positional argument refuses it empty or blank, each position in turn, as
// a usage error that names the argument, and sends nothing.
func TestEmptyArgs_RefusedBeforeAnyRequest(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		t.Errorf("a request was sent: %s %s", r.Method, r.URL)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	// Flags the commands require, so that only the empty argument is wrong.
	required := map[string][]string{"approve": {"--wave", "1"}, "reject": {"--wave", "1"}}
	checked := 0
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		names := positionalNames(cmd.Use)
		if len(names) == 0 || cmd.Args == nil {
			return
		}
		path := strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "myrctl "))
		for i := range names {
			for _, empty := range []string{"", "  "} {
				args := append([]string{}, path...)
				for j := range names {
					if j == i {
						args = append(args, empty)
					} else {
						args = append(args, "x")
					}
				}
				args = append(args, required[cmd.Name()]...)
				var out, errOut bytes.Buffer
				g := newGlobals(&out, &errOut)
				code := runContext(context.Background(), g, append([]string{"--api", srv.URL, "--token", "some-token"}, args...))
				want := names[i] + " is "
				if len(names) > 1 {
					want = names[i] + " (argument " + string(rune('1'+i)) + ") is "
				}
				if code != 2 || !strings.HasPrefix(errOut.String(), "myrctl: "+strings.Join(path, " ")+": "+want) || out.Len() != 0 {
					t.Errorf("myrctl %q: exit %d stdout %q stderr %q, want 2 and a line naming %s", args, code, out.String(), errOut.String(), names[i])
				}
				checked++
			}
		}
	}
	walk(newRoot(newGlobals(&bytes.Buffer{}, &bytes.Buffer{})))
	if checked < 40 || calls.Load() != 0 {
		t.Fatalf("%d runs checked, %d requests sent; want every command with arguments and no request", checked, calls.Load())
	}
}

// TestEmptyArgs_Messages: the line says which argument is empty and what
// to give, as the user reads it.
func TestEmptyArgs_Messages(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", ""}, `myrctl: watch: ROLLOUT is empty: give a rollout id (myrctl rollouts list shows them)` + "\n"},
		{[]string{"rollouts", "approve", "", "--wave", "1"}, `myrctl: rollouts approve: ID is empty: give a rollout id (myrctl rollouts list shows them)` + "\n"},
		{[]string{"agents", "get", " "}, `myrctl: agents get: ID|NAME is blank: give an agent's instance UID or display name (myrctl agents list shows them)` + "\n"},
		{[]string{"fleets", "select-version", "edge", ""}, `myrctl: fleets select-version: VERSION (argument 2) is empty: give a version such as 0.162.0` + "\n"},
		{[]string{"audit", "--target-type", "fleet", "--target-id", ""}, "myrctl: --target-type and --target-id must not be empty: give fleet, rollout, revision or release, and its name, id or commit\n"},
	} {
		r := c.run("some-token", tc.args...)
		if r.code != 2 || r.stderr != tc.want {
			t.Errorf("myrctl %q: exit %d stderr %q, want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
