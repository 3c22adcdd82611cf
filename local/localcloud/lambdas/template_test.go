package lambdas

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// loadTemplate parses testdata/<name>.template.json in a cloud assembly
// of the test's own, whose assets get bootstraps from assets (asset hash
// → bootstrap file, copied with its mode; "" leaves the asset without
// one).
func loadTemplate(t *testing.T, name string, assets map[string]string) *cfn.Template {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".template.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for hash, src := range assets {
		asset := filepath.Join(dir, "asset."+hash)
		if err := os.MkdirAll(asset, 0o755); err != nil {
			t.Fatal(err)
		}
		if src != "" {
			st, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			copyFile(t, src, filepath.Join(asset, "bootstrap"), st.Mode())
		}
	}
	tpl, err := cfn.Parse(raw, dir, "S", cfn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// otherArch is the test bootstrap with its ELF header claiming the other
// architecture Lambda runs (e_machine, at offset 18).
func otherArch(t *testing.T) string {
	other := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		other = elf.EM_X86_64
	}
	b, err := os.ReadFile(testBootstrap(t))
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(b[18:], uint16(other))
	path := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFunctionsFrom(t *testing.T) {
	tpl := loadTemplate(t, "functions", map[string]string{"aaa": testBootstrap(t), "bbb": testBootstrap(t)})
	fns, err := FunctionsFrom(tpl)
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 {
		t.Fatalf("%d functions: %+v", len(fns), fns)
	}
	plain, planner := fns[0], fns[1] // sorted by logical id
	want := Function{
		LogicalID: "FnPlanner", Name: "s-planner", ARN: "arn:aws:lambda:us-east-1:123456789012:function:s-planner",
		RoleLogicalID: "RolePlanner", Bootstrap: filepath.Join(tpl.Dir, "asset.aaa", "bootstrap"),
		Timeout: 300 * time.Second, MemoryMB: 512, ReservedConcurrency: 1,
		Async: AsyncConfig{MaxRetries: 0, MaxEventAge: 60 * time.Second},
	}
	env := planner.Env
	planner.Env = nil
	if !reflect.DeepEqual(planner, want) {
		t.Errorf("planner:\n got %+v\nwant %+v", planner, want)
	}
	if env["MACHINE"] != "arn:aws:states:us-east-1:123456789012:stateMachine:m" || env["PLANNER"] != "s-planner" || len(env) != 2 {
		t.Errorf("planner's environment %v", env)
	}
	// Without Timeout, MemorySize, reservation or EventInvokeConfig: AWS's defaults.
	if plain.Name != "S-FnPlain" || plain.Timeout != 3*time.Second || plain.MemoryMB != 128 || plain.ReservedConcurrency != -1 ||
		plain.Async != (AsyncConfig{MaxRetries: 2, MaxEventAge: 6 * time.Hour}) || plain.RoleLogicalID != "RolePlain" {
		t.Errorf("plain: %+v", plain)
	}
}

// A function the local cloud cannot run is an error that names it and
// says what to do.
func TestFunctionsFrom_Refuses(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "bootstrap")
	copyFile(t, testBootstrap(t), notExec, 0o644)
	cases := []struct {
		name   string
		assets map[string]string
		want   []string
	}{
		{name: "missing bootstrap", assets: map[string]string{"aaa": "", "bbb": testBootstrap(t)}, want: []string{"FnPlanner (s-planner)", "bootstrap missing", "make synth"}},
		{name: "other architecture", assets: map[string]string{"aaa": otherArch(t), "bbb": testBootstrap(t)}, want: []string{"FnPlanner (s-planner)", "this machine runs " + runtime.GOARCH, "LAMBDA_GOARCH=" + runtime.GOARCH}},
		{name: "not executable", assets: map[string]string{"aaa": notExec, "bbb": testBootstrap(t)}, want: []string{"FnPlanner", "not executable"}},
	}
	for _, c := range cases {
		_, err := FunctionsFrom(loadTemplate(t, "functions", c.assets))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want an error with %q", c.name, err, w)
			}
		}
		// The refused function's EventInvokeConfig adds no second error.
		if err != nil && strings.Contains(err.Error(), "event invoke config") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	_, err := FunctionsFrom(loadTemplate(t, "unsupported", map[string]string{"aaa": testBootstrap(t)}))
	for _, w := range []string{`FnNode (S-FnNode): Handler "index.handler"`, `FnImage (S-FnImage): Code.S3Key ""`, `Qualifier "live"`, "DestinationConfig is not emulated", `no function "nowhere"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("unsupported: %v, want an error with %q", err, w)
		}
	}
}
