package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/rollout"
)

// People added with `myriarch-local token` get a token each, and the file
// holds their hashes in the API's token table format; a bad role, a name
// that is there already or a file that is no token table changes nothing.
func TestToken_AddsPeople(t *testing.T) {
	file := filepath.Join(t.TempDir(), "people.json")
	var out, errs strings.Builder
	if code := run([]string{"token", "-file", file, "-name", "Dana", "-role", "operator"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	dana := lines[len(lines)-1]
	if want := "Dana (operator) added to " + file + "; start make run with MYRIARCH_TOKENS_FILE=" + file + ". The token, shown only now:"; lines[0] != want || !strings.HasPrefix(dana, "myr_") {
		t.Fatalf("printed:\n%s\nwant %q and the token", out.String(), want)
	}
	if _, err := mintPerson(file, "Eli", api.RoleOperator); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	for _, c := range []struct {
		name string
		role api.Role
		want string
	}{
		{name: "Fay", role: "boss", want: `role "boss" must be viewer, operator or admin`},
		{name: "dana", role: api.RoleViewer, want: "already has Dana (operator): choose another name"},
	} {
		if _, err := mintPerson(file, c.name, c.role); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s as %s: %v, want %q", c.name, c.role, err, c.want)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("a refused person changed the file:\n%s", after)
	}
	entries, from, err := loadPeople(env{envTokensFile: file}.get)
	if err != nil || len(entries) != 2 || from != envTokensFile+" "+file {
		t.Fatalf("loadPeople: %v %q %v", entries, from, err)
	}
	table, _ := api.NewTokenTable(entries)
	if p, err := table.Authenticate(dana); err != nil || p.DisplayName != "Dana" || p.Role != api.RoleOperator {
		t.Errorf("Dana's token: %+v %v", p, err)
	}
	if line := peopleLine(entries, from); line != "  People            Dana (operator), Eli (operator)   (from MYRIARCH_TOKENS_FILE "+file+")" {
		t.Errorf("banner line %q", line)
	}

	notTable := filepath.Join(t.TempDir(), "tokens.json")
	_ = os.WriteFile(notTable, []byte(`{"admin":"a","operator":"b","viewer":"c","agent":"d"}`), 0o600)
	if _, err := mintPerson(notTable, "Gus", api.RoleAdmin); err == nil || !strings.Contains(err.Error(), "not a JSON list of tokenSha256, actor, displayName and role") {
		t.Errorf("a stack's own tokens file taken for a token table: %v", err)
	}
	if _, _, err := loadPeople(env{envTokens: `[{"tokenSha256":"00","actor":"user:x","displayName":"D","role":"operator"}]`}.get); err == nil ||
		err.Error() != "MYRIARCH_TOKENS: token 0: tokenSha256 must be 64 hex digits" {
		t.Errorf("a bad MYRIARCH_TOKENS: %v", err)
	}
}

type env map[string]string

func (e env) get(k string) string { return e[k] }

// A policy that needs two approvers can be approved on make run: the
// stack started with a token table naming two operators (MYRIARCH_TOKENS_FILE)
// takes both approvals of a wave the admin's revision started.
func TestRun_TokensFile_TwoOperatorsApprove(t *testing.T) {
	if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
		t.Skip("MYRIARCH_UNIT_ONLY: runs the stack under DynamoDB Local")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "people.json")
	dana, err := mintPerson(file, "Dana", api.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	eli, err := mintPerson(file, "Eli", api.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envTokensFile, file)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const agents = 2
	st := startLocal(t, ctx, root, buildLocal(t), "", []string{"-agents", "2", "-api", "127.0.0.1:0", "-gateway", "127.0.0.1:0",
		"-sfn", "127.0.0.1:0", "-metrics-target", freePort(t)})
	if want := "  People            Dana (operator), Eli (operator)   (from MYRIARCH_TOKENS_FILE " + file + ")"; !slices.Contains(st.banner, want) {
		t.Errorf("the banner does not name the people:\n%s\nwant %q", strings.Join(st.banner, "\n"), want)
	}
	exported := map[string]string{}
	for _, f := range strings.Fields(strings.TrimPrefix(st.export, "export ")) {
		k, v, _ := strings.Cut(f, "=")
		exported[k] = v
	}
	admin := client.New(exported["MYRIARCH_API"], exported["MYRIARCH_TOKEN"])
	waitFor(t, ctx, "the agents", func() bool {
		list, err := admin.AllAgents(ctx, client.AgentFilter{}, 0)
		return err == nil && len(list) == agents
	})
	files := twoApproversRevision(t, root)
	if _, err := admin.ApplyRevision(ctx, client.RevisionRequest{Commit: "bootstrap", Files: files}); err != nil {
		t.Fatal(err)
	}
	files["configs/edge.yaml"] += "\n# a change\n"
	applied, err := admin.ApplyRevision(ctx, client.RevisionRequest{Commit: "change", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for _, f := range applied.Fleets {
		for _, p := range f.Plans {
			if p.Created {
				id = p.RolloutID
			}
		}
	}
	if id == "" {
		t.Fatalf("the change created no rollout: %+v", applied)
	}
	waitFor(t, ctx, "the approval wait", func() bool {
		r, err := admin.GetRollout(ctx, id)
		return err == nil && r.Status == rollout.WaitingApproval
	})
	r, err := client.New(exported["MYRIARCH_API"], dana).Approve(ctx, id, 0)
	if err != nil {
		t.Fatal("Dana approves:", err)
	}
	if w := r.Waves[0]; w.Approved || len(w.Approvals) != 1 || w.ApprovalsRequired != 2 {
		t.Fatalf("after one approval of two the wave is %+v", w)
	}
	r, err = client.New(exported["MYRIARCH_API"], eli).Approve(ctx, id, 0)
	if err != nil {
		t.Fatal("Eli approves:", err)
	}
	var by []string
	for _, d := range r.Waves[0].Approvals {
		by = append(by, d.By)
	}
	if w := r.Waves[0]; !w.Approved || !slices.Equal(by, []string{"Dana", "Eli"}) {
		t.Fatalf("after both approvals the wave is %+v (approved by %v)", w, by)
	}
	st.stop(t)
}

// twoApproversRevision is the quickstart revision whose configuration
// policy has one wave that needs two approvers.
func twoApproversRevision(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{"fleets/edge.yaml", "configs/edge.yaml", "policies/demo-version.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "examples/quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	files["fleets/edge.yaml"] = strings.Replace(files["fleets/edge.yaml"], "configPolicy: demo-config", "configPolicy: two-approvers", 1)
	files["policies/two-approvers.yaml"] = `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata:
  name: two-approvers
spec:
  waves:
    - name: all
      percent: 100
      requireApproval: true
  approvals: {required: 2}
  maxConcurrent: 0
  healthWait: 1s
  applyTimeout: 5m
  offlineGracePeriod: 2m
  failureThreshold: {maxFailed: 1}
`
	return files
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
