package lambdas

import (
	"debug/elf"
	"fmt"
	"os"
	"runtime"
)

// machines are the ELF machines of the architectures Lambda runs.
var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkBootstrap refuses a bootstrap this machine cannot run, before any
// invocation finds out: a missing file, one that is not executable, or an
// executable for another architecture (the assets of a plain synthesis
// are arm64, the deployed architecture).
func checkBootstrap(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("bootstrap missing: %w (build the assets with `make synth`)", err)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", path, err)
	}
	defer f.Close()
	if want := machines[runtime.GOARCH]; f.Machine != want {
		return fmt.Errorf("%s is built for %s, this machine runs %s: synthesize with LAMBDA_GOARCH=%s so that scripts/build-lambdas.sh builds the assets for it",
			path, archOf(f.Machine), runtime.GOARCH, runtime.GOARCH)
	}
	return nil
}

func archOf(m elf.Machine) string {
	for arch, mm := range machines {
		if mm == m {
			return arch
		}
	}
	return m.String()
}
