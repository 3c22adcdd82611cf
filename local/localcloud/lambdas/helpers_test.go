package lambdas

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// rieBinary is the emulator scripts/with-lambda-rie.sh provides. Without
// it the test fails: RIE tests are part of the suite.
func rieBinary(t *testing.T) string {
	t.Helper()
	rie := os.Getenv("MYRIARCH_LAMBDA_RIE")
	if rie == "" {
		if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
			t.Skip("MYRIARCH_UNIT_ONLY: RIE tests run with make test")
		}
		t.Fatal("MYRIARCH_LAMBDA_RIE is unset: this test runs functions under the Lambda Runtime Interface Emulator; run it through scripts/with-lambda-rie.sh")
	}
	return rie
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// testBootstrap is testdata/fn built as Lambda builds a provided.al2023
// function, for this machine's architecture, once per test binary.
func testBootstrap(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lambdas-fn-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", built, "./testdata/fn")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build testdata/fn: %v", buildErr)
	}
	return built
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}
