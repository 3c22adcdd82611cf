package revision

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
)

// configYAML is a collector configuration of exactly n bytes (n >= 12).
func configYAML(n int) []byte {
	var b strings.Builder
	b.WriteString("receivers:\n")
	for i := 0; ; i++ {
		line := fmt.Sprintf("  r%07d: {}\n", i)
		if b.Len()+len(line) > n {
			break
		}
		b.WriteString(line)
	}
	if r := n - b.Len(); r > 0 {
		b.WriteString(strings.Repeat("#", r-1) + "\n")
	}
	return []byte(b.String())
}

func TestLoad_Limits(t *testing.T) {
	good := readDir(t, "../../examples/quickstart")
	with := func(extra map[string][]byte) map[string][]byte {
		files := map[string][]byte{}
		for k, v := range good {
			files[k] = v
		}
		for k, v := range extra {
			files[k] = v
		}
		return files
	}
	// A fleet of 10 KiB of YAML that is 100 KiB as stored: ten aliases of one
	// 10 KiB value.
	var aliased strings.Builder
	aliased.WriteString("apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: edge}\nspec:\n  selector:\n    matchAttributes:\n")
	fmt.Fprintf(&aliased, "      a0: &big %s\n", strings.Repeat("x", 10<<10))
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&aliased, "      a%d: *big\n", i)
	}
	// The other files when configs/edge.yaml is replaced.
	rest := totalSize(good) - len(good["configs/edge.yaml"])
	tests := []struct {
		name  string
		files map[string][]byte
		code  string
		path  string
		msg   string // "" when the code must be absent; SIZE stands for the size of an object's JSON
	}{
		{name: "a configuration at the limit", files: with(map[string][]byte{"configs/edge.yaml": configYAML(MaxConfigBytes)}), code: CodeConfigTooLarge},
		{name: "a configuration of 1 MB", files: with(map[string][]byte{"configs/edge.yaml": configYAML(1 << 20)}), code: CodeConfigTooLarge},
		{name: "a configuration one byte over", files: with(map[string][]byte{"configs/edge.yaml": configYAML(MaxConfigBytes + 1)}), code: CodeConfigTooLarge, path: "configs/edge.yaml",
			msg: "configs/edge.yaml is 4194305 bytes (4.0 MiB), over the limit of 4194304 bytes (4.0 MiB) for a rendered configuration"},
		{name: "files at the limit together", files: with(map[string][]byte{"configs/edge.yaml": configYAML(MaxConfigBytes), "configs/other.yaml": configYAML(MaxBytes - MaxConfigBytes - rest)}), code: CodeRevisionTooLarge},
		{name: "files over the limit together", files: with(map[string][]byte{"configs/edge.yaml": configYAML(MaxConfigBytes), "configs/other.yaml": configYAML(MaxBytes - MaxConfigBytes - rest + 1)}), code: CodeRevisionTooLarge, path: "",
			msg: "the files of the revision are 5242881 bytes (5.0 MiB) together, over the limit of 5242880 bytes (5.0 MiB): split the fleets over several revisions or shrink their configurations"},
		{name: "a fleet expanded by aliases", files: with(map[string][]byte{"fleets/edge.yaml": []byte(aliased.String())}), code: CodeObjectTooLarge, path: "fleets/edge.yaml",
			msg: `fleet "edge" is SIZE as stored, over the limit of 65536 bytes (64.0 KiB) for a fleet`},
		{name: "a policy with a long comment", files: with(map[string][]byte{"policies/demo-config.yaml": []byte(string(good["policies/demo-config.yaml"]) + "# " + strings.Repeat("x", 70<<10) + "\n")}), code: CodeObjectTooLarge}, // not stored
		{name: "a policy over the limit", files: with(map[string][]byte{"policies/demo-config.yaml": []byte(strings.Replace(string(good["policies/demo-config.yaml"]), "labels.wave: canary", "labels.wave: "+strings.Repeat("c", 70<<10), 1))}), code: CodeObjectTooLarge, path: "policies/demo-config.yaml",
			msg: `policy "demo-config" is SIZE as stored, over the limit of 65536 bytes (64.0 KiB) for a policy`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, issues := Load(tt.files, "c1")
			found := issues.WithCode(tt.code)
			if tt.msg == "" {
				if len(found) != 0 || issues.HasErrors() {
					t.Fatalf("issues %v, want none of %s and no error", issues, tt.code)
				}
				return
			}
			// The JSON of an object grows with its type; the rest of the message is exact.
			msg := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(tt.msg), "SIZE", `\d+ bytes \(\d+\.\d KiB\)`) + "$")
			if len(found) != 1 || found[0].Severity != issue.Error || found[0].Path != tt.path || !msg.MatchString(found[0].Message) {
				t.Fatalf("issues %v, want one error at %q: %s", found, tt.path, tt.msg)
			}
		})
	}
}

func totalSize(files map[string][]byte) int {
	n := 0
	for _, b := range files {
		n += len(b)
	}
	return n
}
