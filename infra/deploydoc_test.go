package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/api"
)

// The operator-token step of docs/deploy.md works as written: its commands,
// run from a repository root, write the file that step 5 deploys, the app
// reads it (apiTokensFile) and the authorizer's check accepts the token
// the commands printed, as an admin.
func TestDeployGuide_TokenStepMakesAValidTable(t *testing.T) {
	raw, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	step := regexp.MustCompile("(?s)4\\. \\*\\*Operator tokens\\.\\*\\*.*?```sh\n(.*?)\n *```").FindStringSubmatch(doc)
	if step == nil {
		t.Fatal("docs/deploy.md: no sh block in step 4, Operator tokens")
	}
	deploy := regexp.MustCompile(`-c apiTokensFile=(\S+)`).FindStringSubmatch(doc)
	if deploy == nil {
		t.Fatal("docs/deploy.md: the deploy step passes no apiTokensFile")
	}
	for _, tool := range []string{"bash", "openssl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: the guide's token step needs it", tool)
		}
	}
	root := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", step[1])
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the token step fails: %v\n%s", err, out)
	}
	token, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "keep this: ")
	if !ok {
		t.Fatalf("the token step printed %q, want keep this: <token>", out)
	}
	if _, err := os.Stat(filepath.Join(root, deploy[1])); err != nil {
		t.Fatalf("the token step wrote no %s, which the deploy step reads: %v", deploy[1], err)
	}
	c, err := LoadConfig(lookup(map[string]string{"repoRoot": root, "apiTokensFile": deploy[1]}), lookup(nil))
	if err != nil {
		t.Fatalf("the app refuses the file: %v", err)
	}
	tokens, err := api.ParseTokens([]byte(c.APITokens))
	if err != nil {
		t.Fatal(err)
	}
	p, err := tokens.Authenticate(token)
	if err != nil || p.Role != api.RoleAdmin || p.DisplayName != "Dana" {
		t.Errorf("the printed token authenticates as %+v, %v; want Dana, admin", p, err)
	}
}
