package revision

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
)

const edgeHook = `apiVersion: myriarch.dev/v1alpha1
kind: Executor
metadata: {name: edge-hook}
spec:
  type: webhook
  webhook: {url: "https://deploy.example.com/myriarch", secretRef: edge-hook, cancel: true}
`

// webhookRevision is the quickstart with fleet edge updated through the
// webhook executor object edge-hook.
func webhookRevision(t *testing.T) map[string][]byte {
	t.Helper()
	files := readDir(t, "../../examples/quickstart")
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "executor: updater", "executor: webhook\n    executorRef: edge-hook", 1))
	files["executors/edge-hook.yaml"] = []byte(edgeHook)
	return files
}

func TestLoad_Executors(t *testing.T) {
	rev, issues := Load(webhookRevision(t), "c1")
	if issues.HasErrors() {
		t.Fatalf("issues: %v", issues)
	}
	o, ok := rev.Executor("edge-hook")
	if !ok || o.Type != executorobject.TypeWebhook || o.Path != "executors/edge-hook.yaml" || o.Commit != "c1" {
		t.Fatalf("executor %+v, want edge-hook with its path and commit", o)
	}
	if w := o.Webhook; w.URL != "https://deploy.example.com/myriarch" || w.Method != "POST" || w.CancelURL != w.URL {
		t.Errorf("webhook %+v, want the defaults filled in", w)
	}
}

func TestLoad_ExecutorIssues(t *testing.T) {
	good := webhookRevision(t)
	with := func(p, body string) map[string][]byte { return withFile(good, p, body) }
	awx := "apiVersion: myriarch.dev/v1alpha1\nkind: Executor\nmetadata: {name: edge-hook}\nspec:\n  type: awx\n  awx: {url: https://awx.example.com, jobTemplateId: 7, credentialRef: awx}\n"
	cases := []struct {
		name       string
		files      map[string][]byte
		code, path string
	}{
		{name: "executorRef names no object", files: with("executors/edge-hook.yaml", ""), code: fleet.CodeExecutorInvalid, path: "fleets/edge.yaml: spec.update.executorRef"},
		{name: "object of another type", files: with("executors/edge-hook.yaml", awx), code: fleet.CodeExecutorInvalid, path: "fleets/edge.yaml: spec.update.executorRef"},
		{name: "duplicate executor", files: with("executors/other.yaml", edgeHook), code: CodeDuplicateName, path: "executors/other.yaml"},
		{name: "invalid object", files: with("executors/edge-hook.yaml", strings.Replace(edgeHook, "https://", "ftp://", 1)), code: executorobject.CodeInvalid, path: "executors/edge-hook.yaml: spec.webhook.url"},
		{name: "unknown key in the object", files: with("executors/edge-hook.yaml", edgeHook+"  retries: 3\n"), code: executorobject.CodeUnknownField, path: "executors/edge-hook.yaml: spec.retries"},
		{name: "object too large", files: with("executors/edge-hook.yaml", strings.Replace(edgeHook, "cancel: true", "cancel: true, headers: {X-Pad: "+strings.Repeat("x", MaxObjectBytes)+"}", 1)), code: CodeObjectTooLarge, path: "executors/edge-hook.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, issues := Load(c.files, "c2")
			for _, is := range issues.WithCode(c.code) {
				if is.Path == c.path && is.Severity == issue.Error {
					return
				}
			}
			t.Fatalf("no %s error at %q in %v", c.code, c.path, issues)
		})
	}
}

// An executor file outside the layout is still only a warning, and the
// layout names executors/.
func TestLoad_UnknownFileNamesExecutors(t *testing.T) {
	_, issues := Load(withFile(readDir(t, "../../examples/quickstart"), "executor/x.yaml", edgeHook), "c3")
	found := issues.WithCode(CodeUnknownFile)
	if len(found) != 1 || !strings.Contains(found[0].Message, "executors/") {
		t.Fatalf("issues %v, want an unknown_file warning that names executors/", issues)
	}
}

// withFile is a copy of files with p's body replaced; "" removes p.
func withFile(files map[string][]byte, p, body string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		out[k] = v
	}
	if body == "" {
		delete(out, p)
	} else {
		out[p] = []byte(body)
	}
	return out
}
